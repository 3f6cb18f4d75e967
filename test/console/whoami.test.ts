import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';

// GET /auth/whoami: how the console checks a token before signing in with it.

let ctx: TestApp;

beforeAll(async () => {
  ctx = await createTestApp({ SKILLREG_RATE_LIMIT_AUTH_FAILURES: '3' });
});

afterAll(async () => {
  await ctx?.close();
});

const bearer = (token: string, address = '198.51.100.7') => ({
  authorization: `Bearer ${token}`,
  'x-forwarded-for': address,
});

async function createToken(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/tokens',
    headers: bearer(ADMIN_TOKEN),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('GET /auth/whoami', () => {
  it('names the bootstrap admin token', async () => {
    const res = await ctx.app.inject({ url: '/auth/whoami', headers: bearer(ADMIN_TOKEN) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'admin-token',
      actor: 'admin-token',
      kind: 'bootstrap',
      id: null,
      scopes: ['admin'],
      namespaces: null,
      expiresAt: null,
    });
  });

  it('describes a created token: name, scopes, namespaces and expiry, never the secret', async () => {
    const name = uniqueName('whoami');
    const created = await createToken({
      name,
      scopes: ['publish'],
      namespaces: ['team-a', 'data-*'],
      expiresInDays: 7,
    });
    const res = await ctx.app.inject({ url: '/auth/whoami', headers: bearer(created.secret) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      name,
      actor: `token:${name}`,
      kind: 'token',
      id: created.id,
      scopes: ['publish'],
      namespaces: ['team-a', 'data-*'],
    });
    const expires = Date.parse(body.expiresAt);
    expect(Math.abs(expires - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    expect(res.body).not.toContain(created.secret);
  });

  it('answers 401 problems without a token, for an unknown one and for a revoked one', async () => {
    const missing = await ctx.app.inject({ url: '/auth/whoami' });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(missing.json()).toMatchObject({ status: 401, reason: 'missing' });
    expect(missing.json().detail).toContain('Authorization: Bearer');

    const unknown = await ctx.app.inject({
      url: '/auth/whoami',
      headers: bearer('skr_not-a-token', '198.51.100.20'),
    });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ reason: 'unknown' });
    expect(unknown.json().detail).toContain('not known to this registry');

    const created = await createToken({ name: uniqueName('whoami-revoked'), scopes: ['read'] });
    expect(
      (await ctx.app.inject({ method: 'DELETE', url: `/tokens/${created.id}`, headers: bearer(ADMIN_TOKEN) }))
        .statusCode,
    ).toBe(204);
    const revoked = await ctx.app.inject({
      url: '/auth/whoami',
      headers: bearer(created.secret, '198.51.100.21'),
    });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json()).toMatchObject({ reason: 'revoked' });
  });

  it('counts refused tokens toward the auth-failure limit, like any refused credential', async () => {
    const guess = bearer('skr_guessing-0123456789', '198.51.100.30');
    for (let i = 0; i < 3; i++) {
      expect((await ctx.app.inject({ url: '/auth/whoami', headers: guess })).statusCode).toBe(401);
    }
    const limited = await ctx.app.inject({ url: '/auth/whoami', headers: guess });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ limit: 'auth-failures' });
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await ctx.app.inject({ url: '/openapi.json' })).json();
    const operation = doc.paths['/auth/whoami']?.get;
    expect(operation).toMatchObject({ operationId: 'whoAmI', tags: ['tokens'] });
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '401']));
    expect(Object.keys(operation.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['name', 'scopes', 'namespaces', 'expiresAt']),
    );
  });
});
