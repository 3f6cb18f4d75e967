import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loggerOptions } from '../../src/app.js';
import { tokens } from '../../src/db/schema.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import {
  ADMIN_TOKEN,
  adminAuth,
  createTestApp,
  createTestDatabase,
  type TestApp,
  testConfig,
} from '../helpers/context.js';
import { expectProblem } from '../helpers/problem.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function createToken(
  app: FastifyInstance,
  body: Record<string, unknown>,
  headers: Record<string, string> = adminAuth,
): Promise<{ id: string; secret: string; expiresAt: string | null; scopes: string[]; name: string }> {
  const res = await app.inject({ method: 'POST', url: '/tokens', headers, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const bundleOf = (name: string, body = 'Do the thing.\n') =>
  files({ 'SKILL.md': skillMd({ name, description: 'An auth test skill.', body }) });

describe('auth on writes', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('refuses a publish without a token: 401 problem+json with WWW-Authenticate', async () => {
    const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: {} });
    const problem = expectProblem(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(problem.reason).toBe('missing');
    expect(problem.detail).toContain('publish');
  });

  it('refuses tag moves and yanks without a token', async () => {
    const tag = await ctx.app.inject({
      method: 'PUT',
      url: '/skills/anything/tags/stable',
      payload: { version: '1.0.0' },
    });
    expectProblem(tag, 401);
    expect(tag.headers['www-authenticate']).toBeDefined();
    const yank = await ctx.app.inject({ method: 'DELETE', url: '/skills/anything/versions/1.0.0' });
    expectProblem(yank, 401);
  });

  it('checks the token before reading or validating the body', async () => {
    // An anonymous caller must not learn the body schema, nor make the server buffer an upload.
    const invalidJson = await ctx.app.inject({
      method: 'PUT',
      url: '/skills/anything/tags/stable',
      headers: { 'content-type': 'application/json' },
      payload: '{"version":',
    });
    expectProblem(invalidJson, 401);
    const wrongBody = await ctx.app.inject({
      method: 'PUT',
      url: '/skills/anything/tags/stable',
      payload: {},
    });
    expectProblem(wrongBody, 401);
    const unsupported = await ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { 'content-type': 'image/png' },
      payload: Buffer.alloc(1024),
    });
    expectProblem(unsupported, 401);
    const tooLarge = await ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { 'content-type': 'application/gzip' },
      payload: Buffer.alloc(ctx.app.config.bodyLimit + 1),
    });
    expectProblem(tooLarge, 401);
    const badToken = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: { authorization: 'Bearer skr_unknown' },
      payload: { scopes: 'not-an-array' },
    });
    expect(expectProblem(badToken, 401).reason).toBe('unknown');
  });

  it('refuses a malformed Authorization header with 401', async () => {
    for (const authorization of ['Basic', 'Basic !!!', 'Bearer', 'Bearer two words', ADMIN_TOKEN]) {
      const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: { authorization } });
      const problem = expectProblem(res, 401);
      expect(problem.reason, authorization).toBe('malformed');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    }
  });

  it('takes HTTP Basic with the token as the password (or as the user name), as git sends it', async () => {
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
    for (const authorization of [basic(`git:${ADMIN_TOKEN}`), basic(`${ADMIN_TOKEN}:`), basic(ADMIN_TOKEN)]) {
      const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: { authorization } });
      expect(res.statusCode, `${authorization}: ${res.body}`).toBe(201);
    }
    const wrong = await publish(ctx.app, bundleOf(uniqueName()), {
      headers: { authorization: basic('git:nope') },
    });
    expect(expectProblem(wrong, 401).reason).toBe('unknown');
  });

  it('refuses an unknown token with 401 naming the reason', async () => {
    const res = await publish(ctx.app, bundleOf(uniqueName()), {
      headers: bearer('skr_not-a-real-token-at-all'),
    });
    const problem = expectProblem(res, 401);
    expect(problem.reason).toBe('unknown');
    expect(problem.detail).toMatch(/not known/);
  });

  it('a read-scope token cannot publish: 403 naming the needed scope', async () => {
    const reader = await createToken(ctx.app, { name: 'reader', scopes: ['read'] });
    const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(reader.secret) });
    const problem = expectProblem(res, 403);
    expect(problem.requiredScope).toBe('publish');
    expect(problem.detail).toContain("'publish'");
    // The token is fine for reads.
    expect((await ctx.app.inject({ url: '/skills', headers: bearer(reader.secret) })).statusCode).toBe(200);
  });

  it('a publish token publishes, tags and yanks, but cannot manage tokens or read the audit log', async () => {
    const ci = await createToken(ctx.app, { name: 'ci-publisher', scopes: ['publish'] });
    const auth = bearer(ci.secret);
    const name = uniqueName('pub');
    const first = await publish(ctx.app, bundleOf(name, 'one\n'), { headers: auth });
    expect(first.statusCode, first.body).toBe(201);
    const second = await publish(ctx.app, bundleOf(name, 'two\n'), { headers: auth });
    expect(second.json()).toMatchObject({ version: '1.0.1', created: true });

    const tag = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: auth,
      payload: { version: '1.0.0' },
    });
    expect(tag.statusCode, tag.body).toBe(200);
    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.1`,
      headers: auth,
    });
    expect(yank.statusCode, yank.body).toBe(200);

    const create = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: auth,
      payload: { name: 'escalate', scopes: ['admin'] },
    });
    expect(expectProblem(create, 403).requiredScope).toBe('admin');
    expectProblem(await ctx.app.inject({ url: '/tokens', headers: auth }), 403);
    expectProblem(await ctx.app.inject({ url: '/audit', headers: auth }), 403);
  });

  it('an admin creates a token whose secret is answered once and never listed', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: 'ci-main', scopes: ['publish', 'publish'] },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      name: 'ci-main',
      scopes: ['publish'],
      createdBy: 'admin-token',
      expiresAt: null,
    });
    expect(created.secret).toEqual(expect.any(String));
    expect(created.secret.length).toBeGreaterThanOrEqual(32);
    expect(created.secret.startsWith(created.prefix)).toBe(true);

    const [stored] = await ctx.database.db
      .select({ secretHash: tokens.secretHash })
      .from(tokens)
      .where(eq(tokens.id, created.id));
    expect(stored?.secretHash).toBeTruthy();
    expect(stored?.secretHash).not.toContain(created.secret);

    const list = await ctx.app.inject({ url: '/tokens', headers: adminAuth });
    expect(list.statusCode).toBe(200);
    const listed = list.json().items.find((item: { id: string }) => item.id === created.id);
    expect(listed).toMatchObject({ name: 'ci-main', scopes: ['publish'], prefix: created.prefix });
    expect(listed).not.toHaveProperty('secret');
    expect(list.body).not.toContain(created.secret);
    expect(list.body).not.toContain(stored!.secretHash);
    expect(list.body).not.toContain(created.secret.slice(created.prefix.length));
  });

  it('validates token creation bodies', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: 'x', scopes: ['superuser'] },
    });
    expectProblem(res, 400);
  });

  it('DELETE /tokens/{id} revokes: the token then answers 401 revoked and leaves the listing', async () => {
    const token = await createToken(ctx.app, { name: 'short-lived', scopes: ['publish'] });
    expect(
      (await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(token.secret) })).statusCode,
    ).toBe(201);

    const revoke = await ctx.app.inject({ method: 'DELETE', url: `/tokens/${token.id}`, headers: adminAuth });
    expect(revoke.statusCode).toBe(204);
    const after = await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(token.secret) });
    expect(expectProblem(after, 401).reason).toBe('revoked');
    const list = await ctx.app.inject({ url: '/tokens', headers: adminAuth });
    expect(list.json().items.map((item: { id: string }) => item.id)).not.toContain(token.id);

    const again = await ctx.app.inject({ method: 'DELETE', url: `/tokens/${token.id}`, headers: adminAuth });
    expectProblem(again, 404);
    const notUuid = await ctx.app.inject({ method: 'DELETE', url: '/tokens/not-a-uuid', headers: adminAuth });
    expectProblem(notUuid, 400);
  });

  it('honours expiresInDays, and an expired token answers 401 expired', async () => {
    const before = Date.now();
    const token = await createToken(ctx.app, { name: 'expiring', scopes: ['publish'], expiresInDays: 7 });
    const expiresAt = Date.parse(token.expiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * 86_400_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000 + 1000);
    expect(
      (await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(token.secret) })).statusCode,
    ).toBe(201);

    await ctx.database.db
      .update(tokens)
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(tokens.id, token.id));
    const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(token.secret) });
    const problem = expectProblem(res, 401);
    expect(problem.reason).toBe('expired');
    expect(problem.detail).toMatch(/expired/);
  });

  it('an admin-scope token manages tokens too', async () => {
    const admin = await createToken(ctx.app, { name: 'second-admin', scopes: ['admin'] });
    const child = await createToken(ctx.app, { name: 'child', scopes: ['read'] }, bearer(admin.secret));
    expect(child.secret).toBeTruthy();
    const list = await ctx.app.inject({ url: '/tokens', headers: bearer(admin.secret) });
    expect(list.statusCode).toBe(200);
    const entry = list.json().items.find((item: { id: string }) => item.id === child.id);
    expect(entry.createdBy).toBe('token:second-admin');
  });

  it('reads are public by default; a bad token on a read is still refused', async () => {
    expect((await ctx.app.inject('/skills')).statusCode).toBe(200);
    const name = uniqueName('public');
    await publish(ctx.app, bundleOf(name));
    const content = await ctx.app.inject(`/skills/${name}/content`);
    expect(content.statusCode).toBe(200);
    expect(content.headers['www-authenticate']).toBeUndefined();
    expectProblem(await ctx.app.inject({ url: '/skills', headers: bearer('skr_bogus') }), 401);
  });

  it('GET /audit (admin only) records every write with its actor', async () => {
    const ci = await createToken(ctx.app, { name: 'audited-ci', scopes: ['publish'] });
    const auth = bearer(ci.secret);
    const name = uniqueName('audited');
    await publish(ctx.app, bundleOf(name, 'one\n'), { headers: auth });
    await publish(ctx.app, bundleOf(name, 'two\n'), { headers: auth });
    await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: auth,
      payload: { version: '1.0.0' },
    });
    await ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/1.0.1`, headers: auth });
    const revoked = await createToken(ctx.app, { name: 'to-revoke', scopes: ['read'] });
    await ctx.app.inject({ method: 'DELETE', url: `/tokens/${revoked.id}`, headers: adminAuth });

    expectProblem(await ctx.app.inject('/audit'), 401);
    const res = await ctx.app.inject({ url: '/audit?limit=500', headers: adminAuth });
    expect(res.statusCode).toBe(200);
    const items: {
      id: number;
      at: string;
      actor: string;
      action: string;
      skill: string | null;
      version: string | null;
      detail: Record<string, unknown>;
    }[] = res.json().items;
    const ofSkill = items.filter((item) => item.skill === name);
    expect(ofSkill.map((item) => [item.action, item.actor, item.version]).reverse()).toEqual([
      ['publish', 'token:audited-ci', '1.0.0'],
      ['publish', 'token:audited-ci', '1.0.1'],
      ['tag', 'token:audited-ci', '1.0.0'],
      ['yank', 'token:audited-ci', '1.0.1'],
    ]);
    expect(items.find((item) => item.action === 'tag' && item.skill === name)?.detail).toMatchObject({
      tag: 'stable',
    });
    const create = items.find((item) => item.action === 'token.create' && item.detail.id === ci.id);
    expect(create).toMatchObject({
      actor: 'admin-token',
      detail: { name: 'audited-ci', scopes: ['publish'] },
    });
    const revoke = items.find((item) => item.action === 'token.revoke' && item.detail.id === revoked.id);
    expect(revoke).toMatchObject({ actor: 'admin-token', detail: { name: 'to-revoke' } });
    for (const item of items) expect(Number.isNaN(Date.parse(item.at))).toBe(false);
    // Newest first, and never a secret.
    expect(items.map((item) => item.id)).toEqual([...items.map((item) => item.id)].sort((a, b) => b - a));
    expect(res.body).not.toContain(ci.secret);
    expect(res.body).not.toContain(revoked.secret);

    const page = await ctx.app.inject({ url: `/audit?limit=2&before=${items[0]!.id}`, headers: adminAuth });
    expect(page.json().items.map((item: { id: number }) => item.id)).toEqual(
      items.slice(1, 3).map((item) => item.id),
    );
  });

  it('a failed publish records nothing in the audit log', async () => {
    const before = (await ctx.app.inject({ url: '/audit?limit=1', headers: adminAuth })).json().items[0]?.id;
    await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer('skr_bogus') });
    await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: 'Not Valid!', description: 'x' }) }));
    const after = (await ctx.app.inject({ url: '/audit?limit=1', headers: adminAuth })).json().items[0]?.id;
    expect(after).toBe(before);
  });
});

describe('SKILLREG_READ_AUTH=true', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => ctx?.close());

  it('reads need a token: 401 without, 200 with a read token', async () => {
    const name = uniqueName('private');
    expect((await publish(ctx.app, bundleOf(name))).statusCode).toBe(201);
    const reader = await createToken(ctx.app, { name: 'agent', scopes: ['read'] });
    const ci = await createToken(ctx.app, { name: 'ci', scopes: ['publish'] });
    for (const url of ['/skills', `/skills/${name}`, `/skills/${name}/content`, `/skills/${name}/versions`]) {
      const anonymous = await ctx.app.inject(url);
      const problem = expectProblem(anonymous, 401);
      expect(problem.requiredScope, url).toBe('read');
      expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer /);
      expect((await ctx.app.inject({ url, headers: bearer(reader.secret) })).statusCode, url).toBe(200);
      // publish implies read
      expect((await ctx.app.inject({ url, headers: bearer(ci.secret) })).statusCode, url).toBe(200);
    }
  });

  it('every operation outside "operations" refuses an anonymous caller, whatever route was added', async () => {
    const name = uniqueName('enumerated');
    await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'x' }), 'references/a.md': '# A\n' }),
    );
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    const params: Record<string, string> = {
      name,
      path: 'references/a.md',
      version: '1.0.0',
      tag: 'stable',
      id: '00000000-0000-4000-8000-000000000000',
    };
    const checked: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
        if (operation.tags?.includes('operations')) continue;
        // The registry's own CLI, not skills: public so CI can fetch it before it holds any token
        // (test/cli/cli-dist.test.ts checks that it answers anonymously under read auth).
        if (operation.tags?.includes('cli')) continue;
        // Trusted publishing's exchange: the body's OIDC ID token is the credential (refusals are
        // test/http/trusted-publishing.test.ts's).
        if ((operation as { operationId?: string }).operationId === 'exchangeOidcToken') continue;
        const url = template.replace(/\{(\w+)\}/g, (_match, key: string) => params[key] ?? 'x');
        const res = await ctx.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          ...(method === 'get' || method === 'delete' ? {} : { payload: {} }),
        });
        expect(res.statusCode, `${method.toUpperCase()} ${url}`).toBe(401);
        checked.push(`${method.toUpperCase()} ${template}`);
      }
    }
    expect(checked).toEqual(expect.arrayContaining(['GET /skills', 'POST /skills', 'GET /tokens']));
    expect(checked.length).toBeGreaterThanOrEqual(12);
  });

  it('keeps /livez and /readyz public', async () => {
    expect((await ctx.app.inject('/livez')).statusCode).toBe(200);
    expect((await ctx.app.inject('/readyz')).statusCode).toBe(200);
  });
});

describe('secrets never reach the logs', () => {
  it('neither the admin token nor a created secret appears in the log output', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const config = testConfig({ LOG_LEVEL: 'trace' });
    // The production logger options (redaction included), writing to our stream instead of stdout.
    const { transport: _transport, ...production } = loggerOptions(config) as Record<string, unknown>;
    const testDatabase = await createTestDatabase();
    const database = await testDatabase.open();
    const app = await buildApp({ config, database, logger: { ...production, level: 'trace', stream } });
    try {
      const created = await createToken(app, { name: 'logged', scopes: ['publish'] });
      const name = uniqueName('logged');
      expect((await publish(app, bundleOf(name), { headers: bearer(created.secret) })).statusCode).toBe(201);
      await app.inject({ url: '/tokens', headers: adminAuth });
      await app.inject({ url: '/skills', headers: bearer(created.secret) });
      await app.inject({ url: '/skills', headers: bearer(`${created.secret}x`) });
      await app.inject({ url: '/skills', headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
      await app.inject({ method: 'DELETE', url: `/tokens/${created.id}`, headers: adminAuth });
      await publish(app, bundleOf(uniqueName()), { headers: bearer(created.secret) });

      const output = lines.join('');
      expect(output).toContain(name); // the capture works: the publish was logged
      expect(output).not.toContain(ADMIN_TOKEN);
      expect(output).not.toContain(created.secret);
      expect(output).not.toContain(created.secret.slice(8));
    } finally {
      await app.close();
      await database.close();
      await testDatabase.drop();
    }
  });
});
