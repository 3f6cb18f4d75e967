/**
 * Before a replica says it is ready it renders one budgeted prompt, so that the per-snapshot work of a
 * prompt layout (entry counts, keep order) is not a client's first request. The layout includes the
 * base URL of the links: with SKILLREG_PUBLIC_URL set, the one every client's prompt uses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../src/domain/scope.js';
import { countedLayoutOfSelection, selectionOfSnapshot } from '../../src/render/prompt-memo.js';
import { layoutKeyOf } from '../../src/render/prompt-tokens.js';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

const PUBLIC_URL = 'https://skills.example.test';

describe('the prompt a replica renders before it is ready', () => {
  let ctx: TestApp;

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_PUBLIC_URL: PUBLIC_URL });
    for (const name of [uniqueName('warm-first'), uniqueName('warm-second')]) {
      const published = await ctx.app.inject({
        method: 'POST',
        url: '/skills',
        headers: { ...adminAuth, 'content-type': 'text/markdown' },
        payload: `---\nname: ${name}\ndescription: Warm the prompt of ${name}.\n---\nSteps.\n`,
      });
      expect(published.statusCode).toBe(201);
    }
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('counts the entries of the layout of the public URL', async () => {
    const failed: unknown[] = [];
    await ctx.app.registry.warm((_part, { error }) => {
      if (error) failed.push(error);
    });
    expect(failed).toEqual([]);
    const { entries } = await ctx.app.registry.agents.catalogues.mirror(DEFAULT_NAMESPACE).snapshot();
    const selection = selectionOfSnapshot.get(entries);
    expect(selection?.skills.length).toBe(2);
    const counted = (baseUrl: string) =>
      countedLayoutOfSelection.get(selection!.skills, layoutKeyOf({ style: 'xml', baseUrl }));
    expect(counted(PUBLIC_URL)?.entries.byIndex.length).toBe(2);
    expect(counted('http://localhost')).toBeUndefined();
    // A client's prompt uses that layout: its links name the public URL.
    const prompt = await ctx.app.inject('/prompt?budget=4000');
    expect(prompt.statusCode).toBe(200);
    expect(prompt.body).toContain(`${PUBLIC_URL}/skills/`);
  });
});
