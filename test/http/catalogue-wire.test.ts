import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalogueResponseSchema } from '../../src/wire/index.js';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

async function publishTo(namespace: string, name: string, description: string, extra = ''): Promise<void> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/namespaces/${namespace}/skills`,
    headers: { ...adminAuth, 'content-type': 'text/markdown' },
    payload: `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nSteps for ${description}\n`,
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

/** The answer's bytes are what encoding its own content with the wire schema gives: no field more, none out of order. */
async function expectSchemaBytes(url: string): Promise<z.output<typeof catalogueResponseSchema>> {
  const res = await ctx.app.inject({ url });
  expect(res.statusCode, res.body).toBe(200);
  const parsed = JSON.parse(res.body);
  expect(res.body).toBe(JSON.stringify(z.encode(catalogueResponseSchema, parsed)));
  return parsed;
}

describe('GET /skills as the wire schema encodes it (the page is written without the schema copy)', () => {
  it('a page by name, a search with matches and a view with layers', async () => {
    const org = uniqueName('org');
    const team = uniqueName('team');
    const word = `zq${Math.random().toString(36).slice(2, 8).replace(/[0-9]/g, 'k')}`;
    const shared = uniqueName('shared');
    await publishTo(org, shared, `Org ${word} flavour.`);
    await publishTo(org, uniqueName('org-only'), `Only the org ${word}.`, 'metadata:\n  owner: org\n');
    await publishTo(team, shared, `Team ${word} flavour.`);
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${uniqueName('view')}`,
      headers: adminAuth,
      payload: { layers: [org, team] },
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    const view = put.json().name as string;

    const byName = await expectSchemaBytes(`/namespaces/${org}/skills?limit=1`);
    expect(byName.items).toHaveLength(1);
    expect(byName.nextCursor).not.toBeNull();
    const next = await expectSchemaBytes(
      `/namespaces/${org}/skills?limit=1&cursor=${encodeURIComponent(byName.nextCursor!)}`,
    );
    expect(next.items[0]!.name).not.toBe(byName.items[0]!.name);

    const searched = await expectSchemaBytes(`/namespaces/${org}/skills?q=${word}`);
    expect(searched.items.length).toBe(2);
    expect(searched.items.every((item) => item.match !== undefined)).toBe(true);

    const layered = await expectSchemaBytes(`/views/${view}/skills`);
    const item = layered.items.find((candidate) => candidate.name === shared);
    expect(item?.namespace).toBe(team);
    expect(item?.description).toBe(`Team ${word} flavour.`);
  });
});
