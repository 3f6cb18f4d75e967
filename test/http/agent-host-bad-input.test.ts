import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

// Bad input to the faces agent hosts read (git, marketplaces, the ClawHub API): a problem document
// naming what is wrong, never a 500.

let ctx: TestApp;
let name: string;
beforeAll(async () => {
  ctx = await createTestApp();
  name = uniqueName('bad-input');
  const form = files({ 'SKILL.md': skillMd({ name, description: 'Target of bad requests.' }) });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/skills',
    headers: { ...adminAuth, 'content-type': 'text/markdown' },
    payload: Buffer.from(form[0]!.bytes),
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(() => ctx?.close());

describe('bad input to the git faces, marketplaces and ClawHub API', () => {
  it('answers each with a problem document and the status that says why', async () => {
    const cases: [string, string, number, string?, string?][] = [
      ['GET', '/git/skills/no-such-skill.git/info/refs?service=git-upload-pack', 404],
      ['GET', '/git/skills/Bad%20Name!.git/info/refs?service=git-upload-pack', 404],
      ['GET', `/git/skills/${'x'.repeat(300)}.git/info/refs?service=git-upload-pack`, 400],
      ['GET', `/git/skills/${name}.git/info/refs?service=git-frobnicate`, 400],
      ['POST', `/git/skills/${name}.git/git-upload-pack`, 415, 'text/plain', 'hello'],
      ['GET', '/views/no-such-view/marketplace.json', 404],
      ['GET', '/views/no-such-view/git/plugins.git/info/refs?service=git-upload-pack', 404],
      ['GET', '/api/v1/download?slug=', 400],
      ['GET', '/api/v1/download?slug=no-such-skill', 404],
      ['GET', `/api/v1/skills/${name}/versions/9.9.9`, 404],
      ['GET', `/api/v1/skills/${name}/file?path=../../etc/passwd`, 400],
      ['GET', `/api/v1/resolve?slug=${name}&hash=abc`, 400],
      ['GET', '/api/v1/skills?limit=0', 400],
      ['GET', '/api/v1/skills?cursor=not-a-cursor', 400],
    ];
    for (const [method, url, status, contentType, payload] of cases) {
      const res = await ctx.app.inject({
        method: method as 'GET' | 'POST',
        url,
        ...(contentType ? { headers: { 'content-type': contentType }, payload } : {}),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 300)}`).toBe(status);
      expect(res.headers['content-type'], url).toMatch(/application\/problem\+json/);
      const problem = res.json() as { detail?: string };
      expect(problem.detail?.length ?? 0, url).toBeGreaterThan(10);
    }
  });
});
