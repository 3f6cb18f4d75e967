import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

describe('input the database cannot take, and URLs that do not decode', () => {
  it.each(['/prompt?name=a%00b', '/tools?q=%00', '/prompt?tag=%00', '/tools?name=%00'])(
    '%s answers 400 problem+json, not 500',
    async (url) => {
      const res = await ctx.app.inject(url);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json().detail).toMatch(/NUL/);
    },
  );

  it('an undecodable URL answers 400 problem+json naming the fix', async () => {
    const res = await ctx.app.inject('/skills/%c0%ae');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 400, title: 'Bad Request' });
    expect(res.json().detail).toMatch(/encodeURIComponent/);
  });
});

describe('proxy headers', () => {
  it('are ignored unless SKILLREG_TRUST_PROXY says a proxy stands in front', async () => {
    const direct = await createTestApp({ SKILLREG_TRUST_PROXY: 'false' });
    try {
      const res = await direct.app.inject({
        url: '/prompt?format=json',
        headers: {
          host: 'registry.internal:3000',
          'x-forwarded-host': 'evil.example',
          'x-forwarded-proto': 'https',
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('evil.example');
    } finally {
      await direct.close();
    }
  });
});

describe('caching behind read auth', () => {
  it("answers Cache-Control private, so shared caches never hand one reader another reader's answer", async () => {
    const closed = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
    try {
      const res = await closed.app.inject({ url: '/skills', headers: adminAuth });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toMatch(/^private\b/);
      const open = await ctx.app.inject('/skills');
      expect(open.headers['cache-control']).toMatch(/^public\b/);
    } finally {
      await closed.close();
    }
  });
});
