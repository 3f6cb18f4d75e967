import http from 'node:http';
import { afterAll, beforeAll, it } from 'vitest';
import { files, publish, skillMd } from './helpers/bundles.js';
import { createTestApp, type TestApp } from './helpers/context.js';

let ctx: TestApp;
let port = 0;
beforeAll(async () => {
  ctx = await createTestApp({ SKILLREG_MAX_BUNDLE_BYTES: '262144', SKILLREG_MAX_FILES: '20' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as { port: number }).port;
});
afterAll(async () => ctx?.close());

function raw(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

it('probe', async () => {
  await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: 'alpha', description: 'A' }), 'references/a.md': 'AAA' }));
  await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: 'beta', description: 'B' }), 'secret.txt': 'BETA-SECRET' }));
  for (const url of [
    '/skills/alpha/files/../beta/files/secret.txt',
    '/skills/alpha/files/../../skills/beta/files/secret.txt',
    '/skills/alpha/files/%2e%2e/%2e%2e/beta/files/secret.txt',
    '/skills/alpha/files/%2e%2e%2f%2e%2e%2fbeta%2ffiles%2fsecret.txt',
    '/skills/alpha/files/%c0%ae%c0%ae/secret.txt',
    '/skills/alpha/files/%c0%ae%c0%ae%c0%af',
    '/skills/alpha/files/%EF%BC%8E%EF%BC%8E/x',
    '/skills/alpha/files/..%00/x',
    '/skills/alpha/files/%0a',
    '/skills/alpha/files/references/./a.md',
    '/skills/alpha/files/references//a.md',
    '/skills/alpha/files/',
    '/skills/alpha/files',
    '/skills/alpha/files/%2fetc%2fpasswd',
    '/skills/alpha/files/\\..\\beta',
  ]) {
    const res = await raw(url);
    console.log('%s %d %s', url, res.status, res.body.slice(0, 200));
  }
});
