import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

describe('smoke', () => {
  it('publishes and reads back', async () => {
    const name = uniqueName();
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'A test skill.' }) }),
    );
    expect(res.json()).toMatchObject({ name, version: '1.0.0', created: true });
    expect(res.statusCode).toBe(201);
    const content = await ctx.app.inject(`/skills/${name}/content`);
    expect(content.body).toContain('Do the thing');
  });
});
