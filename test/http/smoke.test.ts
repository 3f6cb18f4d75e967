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

describe('GET / (the first screen)', () => {
  it('answers a person with a page that leads to the console, the docs and the agent endpoints', async () => {
    const res = await ctx.app.inject({
      url: '/',
      headers: {
        accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        host: 'reg.test',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    for (const path of ['/ui', '/docs', '/prompt', '/mcp', '/.well-known/agent-skills/index.json', '/cli']) {
      expect(res.body).toContain(`href="http://reg.test${path}`);
    }
    // A strict policy: the one inline stylesheet is allowed by its hash, nothing else inline.
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toContain('unsafe-inline');
    const style = /<style>([^<]*)<\/style>/.exec(res.body)![1]!;
    const { createHash } = await import('node:crypto');
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(res.body).not.toMatch(/<script/);
  });

  it('answers a program asking for JSON with the same links', async () => {
    const res = await ctx.app.inject({ url: '/', headers: { accept: 'application/json', host: 'reg.test' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'skill-registry',
      links: { console: 'http://reg.test/ui', docs: 'http://reg.test/docs', mcp: 'http://reg.test/mcp' },
    });
    expect(res.headers.vary).toContain('accept');
  });
});
