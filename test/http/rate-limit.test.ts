import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig } from '../../src/config.js';
import type { Scope } from '../../src/storage/tokens-repository.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const bundleOf = (name: string, body = 'Do the thing.\n') =>
  files({ 'SKILL.md': skillMd({ name, description: 'A rate-limit test skill.', body }) });

function expect429(res: LightMyRequestResponse, limit: string) {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(res.headers['ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['ratelimit-reset'])).toBe(retryAfter);
  const problem = res.json();
  expect(problem).toMatchObject({
    type: 'about:blank',
    title: 'Too Many Requests',
    status: 429,
    limit,
    retryAfter,
    detail: expect.stringMatching(/retry in \d+ s/),
  });
  return problem as { max: number; windowSeconds: number; detail: string };
}

/** Straight through the repository: creating tokens over HTTP would spend the admin token's write budget. */
async function createToken(app: FastifyInstance, name: string, scopes: Scope[] = ['publish']) {
  return app.registry.repositories.tokens.create({ name, scopes, actor: 'test' });
}

describe('configuration', () => {
  it('has generous defaults: writes limited, reads free, refused credentials limited', () => {
    expect(loadConfig({}).rateLimits).toEqual({ writes: 600, reads: 0, authFailures: 30, windowSeconds: 60 });
    expect(loadConfig({}).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
  });

  it('reads every variable; 0 turns a limit off; an empty variable means the default', () => {
    expect(
      loadConfig({
        SKILLREG_RATE_LIMIT_WRITES: '0',
        SKILLREG_RATE_LIMIT_READS: '1000',
        SKILLREG_RATE_LIMIT_AUTH_FAILURES: '5',
        SKILLREG_RATE_LIMIT_WINDOW_SECONDS: '3600',
      }).rateLimits,
    ).toEqual({ writes: 0, reads: 1000, authFailures: 5, windowSeconds: 3600 });
    expect(loadConfig({ SKILLREG_RATE_LIMIT_WRITES: '' }).rateLimits.writes).toBe(600);
  });

  it('lists every invalid value at once', () => {
    try {
      loadConfig({
        SKILLREG_RATE_LIMIT_WRITES: '-1',
        SKILLREG_RATE_LIMIT_READS: 'lots',
        SKILLREG_RATE_LIMIT_AUTH_FAILURES: '2.5',
        SKILLREG_RATE_LIMIT_WINDOW_SECONDS: '0',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      for (const variable of [
        'SKILLREG_RATE_LIMIT_WRITES',
        'SKILLREG_RATE_LIMIT_READS',
        'SKILLREG_RATE_LIMIT_AUTH_FAILURES',
        'SKILLREG_RATE_LIMIT_WINDOW_SECONDS',
      ]) {
        expect(problems).toContain(variable);
      }
    }
  });
});

describe('write limit (per token)', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_WRITES: '3' });
  });
  afterAll(async () => ctx?.close());

  it('counts writes per token with RateLimit-* headers, then answers 429 problem+json with Retry-After', async () => {
    const ci = await createToken(ctx.app, 'ci-limited');
    const name = uniqueName('limited');
    const remaining: string[] = [];
    for (const body of ['one\n', 'two\n', 'three\n']) {
      const res = await publish(ctx.app, bundleOf(name, body), { headers: bearer(ci.secret) });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
      expect(res.headers['retry-after']).toBeUndefined();
      remaining.push(String(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const auditBefore = (await ctx.app.inject({ url: '/audit?limit=1', headers: adminAuth })).json().items[0]
      .id;
    const refused = await publish(ctx.app, bundleOf(name, 'four\n'), { headers: bearer(ci.secret) });
    const problem = expect429(refused, 'writes');
    expect(problem).toMatchObject({ max: 3, windowSeconds: 60 });
    expect(problem.detail).toContain('SKILLREG_RATE_LIMIT_WRITES');
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['x-request-id']).toBeDefined();

    // Tag moves and yanks share the budget; nothing was stored by the refused requests.
    const tag = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: bearer(ci.secret),
      payload: { version: '1.0.0' },
    });
    expect429(tag, 'writes');
    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.0`,
      headers: bearer(ci.secret),
    });
    expect429(yank, 'writes');
    const versions = await ctx.app.inject(`/skills/${name}/versions`);
    expect(versions.json().map((entry: { version: string; tags: string[] }) => entry.version)).toEqual([
      '1.0.2',
      '1.0.1',
      '1.0.0',
    ]);
    expect(versions.json()[2].tags).toEqual([]);
    const auditAfter = (await ctx.app.inject({ url: '/audit?limit=1', headers: adminAuth })).json().items[0]
      .id;
    expect(auditAfter).toBe(auditBefore);
  });

  it('keys by token after authentication: another token and the admin token keep their own budget', async () => {
    const first = await createToken(ctx.app, 'ci-first');
    const second = await createToken(ctx.app, 'ci-second');
    for (let i = 0; i < 3; i += 1) {
      const res = await publish(ctx.app, bundleOf(uniqueName('first')), { headers: bearer(first.secret) });
      expect(res.statusCode).toBe(201);
    }
    expect429(
      await publish(ctx.app, bundleOf(uniqueName('first')), { headers: bearer(first.secret) }),
      'writes',
    );
    const other = await publish(ctx.app, bundleOf(uniqueName('second')), { headers: bearer(second.secret) });
    expect(other.statusCode, other.body).toBe(201);
    expect(other.headers['ratelimit-remaining']).toBe('2');
  });

  it('authentication runs first: anonymous and bad-token writes get 401, not 429, and cost no token budget', async () => {
    const token = await createToken(ctx.app, 'ci-untouched');
    for (let i = 0; i < 5; i += 1) {
      const anonymous = await publish(ctx.app, bundleOf(uniqueName()), { headers: {} });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.headers['ratelimit-limit']).toBeUndefined();
      const forged = await publish(ctx.app, bundleOf(uniqueName()), {
        headers: { ...bearer('skr_forged-token-value'), 'x-forwarded-for': '198.51.100.1' },
      });
      expect(forged.statusCode).toBe(401);
    }
    const res = await publish(ctx.app, bundleOf(uniqueName()), { headers: bearer(token.secret) });
    expect(res.statusCode).toBe(201);
    expect(res.headers['ratelimit-remaining']).toBe('2');
  });

  it('token changes are writes too', async () => {
    const admin = await createToken(ctx.app, 'second-admin', ['admin']);
    const created: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: bearer(admin.secret),
        payload: { name: `child-${i}`, scopes: ['read'] },
      });
      expect(res.statusCode).toBe(201);
      created.push(res.json().id);
    }
    const revoke = await ctx.app.inject({
      method: 'DELETE',
      url: `/tokens/${created[0]}`,
      headers: bearer(admin.secret),
    });
    expect429(revoke, 'writes');
    // Listing tokens is a read: never limited by default.
    expect((await ctx.app.inject({ url: '/tokens', headers: bearer(admin.secret) })).statusCode).toBe(200);
  });

  it('leaves reads, probes and MCP unlimited and without RateLimit headers', async () => {
    const name = uniqueName('readable');
    const ci = await createToken(ctx.app, 'ci-reads');
    expect((await publish(ctx.app, bundleOf(name), { headers: bearer(ci.secret) })).statusCode).toBe(201);
    for (let i = 0; i < 30; i += 1) {
      const res = await ctx.app.inject(`/skills/${name}/content`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
    for (const url of ['/skills', '/livez', '/readyz', '/metrics', '/openapi.json']) {
      const res = await ctx.app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['ratelimit-limit'], url).toBeUndefined();
    }
    const mcp = await ctx.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(mcp.headers['ratelimit-limit']).toBeUndefined();
  });

  it('documents 429 on the limited routes in OpenAPI', async () => {
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.paths['/skills']?.post?.responses).toHaveProperty('429');
    expect(doc.paths['/skills/{name}/tags/{tag}']?.put?.responses).toHaveProperty('429');
    expect(doc.paths['/skills/{name}/versions/{version}']?.delete?.responses).toHaveProperty('429');
    expect(doc.paths['/tokens']?.post?.responses).toHaveProperty('429');
    expect(doc.paths['/skills']?.get?.responses).not.toHaveProperty('429');
  });
});

describe('refused credentials (per credential, not per address)', () => {
  let ctx: TestApp;
  // Reads need a token here, so a read without one is a 401 too: it must not count as a credential.
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_AUTH_FAILURES: '5', SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => ctx?.close());

  it('a stale token past the limit gets 429; valid tokens and other bad tokens behind the same proxy address do not', async () => {
    // Every client behind one proxy: the same X-Forwarded-For.
    const proxy = { 'x-forwarded-for': '203.0.113.7' };
    const reader = await createToken(ctx.app, 'ci-reader', ['read']);
    const ci = await createToken(ctx.app, 'ci-publisher');
    const stale = bearer('skr_stale-ci-token-revoked-long-ago');
    for (let i = 0; i < 5; i += 1) {
      const res = await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...stale } });
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const refused = await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...stale } });
    const problem = expect429(refused, 'auth-failures');
    expect(problem.max).toBe(5);
    expect(refused.headers['ratelimit-limit']).toBe('5');
    expect(problem.detail).toContain('SKILLREG_RATE_LIMIT_AUTH_FAILURES');
    expect(problem.detail).toContain('this credential');

    // Valid tokens from the same address: a read and a write.
    const read = await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...bearer(reader.secret) } });
    expect(read.statusCode, read.body).toBe(200);
    const write = await publish(ctx.app, bundleOf(uniqueName()), {
      headers: { ...proxy, ...bearer(ci.secret) },
    });
    expect(write.statusCode, write.body).toBe(201);

    // Another bad token from the same address is refused for what it is (401), until it too exceeds.
    const typo = bearer('skr_a-different-typo');
    for (let i = 0; i < 5; i += 1) {
      const res = await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...typo } });
      expect(res.statusCode, `typo attempt ${i + 1}`).toBe(401);
    }
    expect429(await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...typo } }), 'auth-failures');
    const malformed = await ctx.app.inject({
      url: '/skills',
      headers: { ...proxy, authorization: 'Basic Zm9vOmJhcg==' },
    });
    expect(malformed.statusCode).toBe(401);

    // The limit follows the credential, not the address it comes from.
    expect429(
      await ctx.app.inject({ url: '/skills', headers: { 'x-forwarded-for': '192.0.2.50', ...stale } }),
      'auth-failures',
    );
    // And the valid tokens still work after all that.
    expect(
      (await ctx.app.inject({ url: '/skills', headers: { ...proxy, ...bearer(reader.secret) } })).statusCode,
    ).toBe(200);
  });

  it('missing credentials, valid tokens and tokens refused a scope (403) are never counted', async () => {
    const address = { 'x-forwarded-for': '198.51.100.23' };
    const good = await createToken(ctx.app, 'ci-busy');
    const reader = await createToken(ctx.app, 'ci-read-only', ['read']);
    for (let i = 0; i < 12; i += 1) {
      const ok = await ctx.app.inject({ url: '/skills', headers: { ...address, ...bearer(good.secret) } });
      expect(ok.statusCode).toBe(200);
      // A private read without a token is a 401, but not a refused credential.
      const anonymous = await ctx.app.inject({ url: '/skills', headers: address });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().reason).toBe('missing');
      const forbidden = await publish(ctx.app, bundleOf(uniqueName()), {
        headers: { ...address, ...bearer(reader.secret) },
      });
      expect(forbidden.statusCode).toBe(403);
    }
    expect((await ctx.app.inject({ url: '/skills', headers: address })).statusCode).toBe(401);
    expect(
      (await ctx.app.inject({ url: '/skills', headers: { ...address, ...bearer(reader.secret) } }))
        .statusCode,
    ).toBe(200);
    // A bad token from this address starts from zero.
    for (let i = 0; i < 5; i += 1) {
      const res = await ctx.app.inject({ url: '/skills', headers: { ...address, ...bearer('skr_typo') } });
      expect(res.statusCode).toBe(401);
    }
    expect(
      (await ctx.app.inject({ url: '/skills', headers: { ...address, ...bearer(good.secret) } })).statusCode,
    ).toBe(200);
  });
});

describe('windows, read limits and switching off', () => {
  it('a limit resets when its window ends', async () => {
    const ctx = await createTestApp({
      SKILLREG_RATE_LIMIT_WRITES: '1',
      SKILLREG_RATE_LIMIT_AUTH_FAILURES: '1',
      SKILLREG_RATE_LIMIT_WINDOW_SECONDS: '1',
    });
    try {
      const name = uniqueName('window');
      expect((await publish(ctx.app, bundleOf(name, 'one\n'))).statusCode).toBe(201);
      const refused = await publish(ctx.app, bundleOf(name, 'two\n'));
      expect(expect429(refused, 'writes').windowSeconds).toBe(1);
      expect(refused.headers['retry-after']).toBe('1');
      const guess = { 'x-forwarded-for': '203.0.113.9', ...bearer('skr_guess') };
      expect((await ctx.app.inject({ url: '/skills', headers: guess })).statusCode).toBe(401);
      expect429(await ctx.app.inject({ url: '/skills', headers: guess }), 'auth-failures');

      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const again = await publish(ctx.app, bundleOf(name, 'two\n'));
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json().version).toBe('1.0.1');
      expect((await ctx.app.inject({ url: '/skills', headers: guess })).statusCode).toBe(401);
    } finally {
      await ctx.close();
    }
  });

  it('SKILLREG_RATE_LIMIT_READS limits reads per address but never the probes', async () => {
    const ctx = await createTestApp({ SKILLREG_RATE_LIMIT_READS: '2' });
    try {
      const first = await ctx.app.inject('/skills');
      expect(first.statusCode).toBe(200);
      expect(first.headers['ratelimit-limit']).toBe('2');
      expect(first.headers['ratelimit-remaining']).toBe('1');
      expect((await ctx.app.inject('/skills?limit=1')).statusCode).toBe(200);
      const refused = await ctx.app.inject('/skills/anything/content');
      expect(expect429(refused, 'reads').detail).toContain('SKILLREG_RATE_LIMIT_READS');
      // Another address has its own budget; probes and scrapes are never limited.
      expect(
        (await ctx.app.inject({ url: '/skills', headers: { 'x-forwarded-for': '192.0.2.1' } })).statusCode,
      ).toBe(200);
      for (let i = 0; i < 5; i += 1) {
        for (const url of ['/livez', '/readyz', '/metrics']) {
          expect((await ctx.app.inject(url)).statusCode, url).toBe(200);
        }
      }
      // Writes have their own budget.
      expect((await publish(ctx.app, bundleOf(uniqueName()))).statusCode).toBe(201);
    } finally {
      await ctx.close();
    }
  });

  it('0 turns limits off: no headers, no 429', async () => {
    const ctx = await createTestApp({
      SKILLREG_RATE_LIMIT_WRITES: '0',
      SKILLREG_RATE_LIMIT_AUTH_FAILURES: '0',
    });
    try {
      const name = uniqueName('unlimited');
      for (let i = 0; i < 8; i += 1) {
        const res = await publish(ctx.app, bundleOf(name, `body ${i}\n`));
        expect(res.statusCode).toBe(201);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
      for (let i = 0; i < 40; i += 1) {
        expect((await ctx.app.inject({ url: '/skills', headers: bearer(`skr_guess-${i}`) })).statusCode).toBe(
          401,
        );
      }
    } finally {
      await ctx.close();
    }
  });
});
