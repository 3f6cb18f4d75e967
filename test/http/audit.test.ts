import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

// GET /audit: every write (publish, tag move, yank, token change) with its actor, time and what
// changed; nothing for requests that change nothing or are refused. test/http/auth.test.ts covers the
// basics (actors, admin only, one page with `before`); this covers the rest.

interface AuditItem {
  id: number;
  at: string;
  actor: string;
  action: string;
  skill: string | null;
  version: string | null;
  detail: Record<string, unknown>;
}

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const bundleOf = (name: string, body = 'Audited.\n') =>
  files({ 'SKILL.md': skillMd({ name, description: 'An audit test skill.', body }) });

let ctx: TestApp;
beforeAll(async () => {
  // Small limits so a 413 is cheap to provoke.
  ctx = await createTestApp({ SKILLREG_MAX_BUNDLE_BYTES: String(256 * 1024) });
});
afterAll(async () => ctx?.close());

async function audit(app: FastifyInstance, query = 'limit=500'): Promise<AuditItem[]> {
  const res = await app.inject({ url: `/audit?${query}`, headers: adminAuth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

async function newestId(): Promise<number | undefined> {
  return (await audit(ctx.app, 'limit=1'))[0]?.id;
}

async function createToken(name: string, scopes: string[]) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/tokens',
    headers: adminAuth,
    payload: { name, scopes },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

describe('what an audit entry says', () => {
  it('publish, tag, yank and token changes each record actor, time and what changed', async () => {
    const since = await newestId();
    const startedAt = Date.now();
    const ci = await createToken('audit-ci', ['publish']);
    const admin = await createToken('audit-admin', ['admin']);
    const name = uniqueName('what');

    const first = await publish(ctx.app, bundleOf(name, 'one\n'), {
      query: 'tag=beta',
      headers: bearer(ci.secret),
    });
    expect(first.statusCode).toBe(201);
    const second = await publish(ctx.app, bundleOf(name, 'two\n'), { headers: bearer(ci.secret) });
    expect(second.statusCode).toBe(201);
    const move = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/beta`,
      headers: bearer(ci.secret),
      payload: { version: '1.0.1' },
    });
    expect(move.statusCode).toBe(200);
    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.1`,
      headers: bearer(ci.secret),
    });
    expect(yank.statusCode).toBe(200);
    const revoke = await ctx.app.inject({
      method: 'DELETE',
      url: `/tokens/${ci.id}`,
      headers: bearer(admin.secret),
    });
    expect(revoke.statusCode).toBe(204);
    const finishedAt = Date.now();

    const entries = (await audit(ctx.app)).filter((item) => since === undefined || item.id > since).reverse(); // oldest first
    const summary = entries.map((item) => [item.action, item.actor, item.skill, item.version]);
    expect(summary.slice(0, 2)).toEqual([
      ['token.create', 'admin-token', null, null],
      ['token.create', 'admin-token', null, null],
    ]);
    // A publish with ?tag= writes both rows in one transaction; which comes first is not a promise.
    expect(summary.slice(2, 4)).toHaveLength(2);
    expect(summary.slice(2, 4)).toEqual(
      expect.arrayContaining([
        ['publish', 'token:audit-ci', name, '1.0.0'],
        ['tag', 'token:audit-ci', name, '1.0.0'],
      ]),
    );
    expect(summary.slice(4)).toEqual([
      ['publish', 'token:audit-ci', name, '1.0.1'],
      ['tag', 'token:audit-ci', name, '1.0.1'],
      ['yank', 'token:audit-ci', name, '1.0.1'],
      ['token.revoke', 'token:audit-admin', null, null],
    ]);
    const entry = (action: string, version: string | null = null) =>
      entries.find((item) => item.action === action && item.version === version)!;
    const [createCi, createAdmin] = entries;
    const [publishOne, tagOne] = [entry('publish', '1.0.0'), entry('tag', '1.0.0')];
    const [publishTwo, tagTwo, yankTwo] = [
      entry('publish', '1.0.1'),
      entry('tag', '1.0.1'),
      entry('yank', '1.0.1'),
    ];
    const revokeCi = entry('token.revoke');
    expect(createCi!.detail).toEqual({ id: ci.id, name: 'audit-ci', scopes: ['publish'] });
    expect(createAdmin!.detail).toMatchObject({ id: admin.id, scopes: ['admin'] });
    expect(publishOne!.detail).toMatchObject({ digest: first.json().digest, files: 1 });
    expect(publishTwo!.detail).toMatchObject({
      digest: second.json().digest,
      versionSource: expect.any(String),
    });
    expect(tagOne!.detail).toEqual({ tag: 'beta', previous: null });
    expect(tagTwo!.detail).toEqual({ tag: 'beta', previous: '1.0.0' });
    expect(yankTwo!.detail).toMatchObject({ removedTags: expect.arrayContaining(['beta', 'latest']) });
    expect(revokeCi!.detail).toEqual({ id: ci.id, name: 'audit-ci' });

    // Times are real instants of the writes, in order; ids increase with them.
    for (const item of entries) {
      const at = Date.parse(item.at);
      expect(at).toBeGreaterThanOrEqual(startedAt - 1_000);
      expect(at).toBeLessThanOrEqual(finishedAt + 1_000);
    }
    const times = entries.map((item) => Date.parse(item.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Never a secret, not even the admin's.
    const body = JSON.stringify(entries);
    expect(body).not.toContain(ci.secret);
    expect(body).not.toContain(admin.secret);
  });
});

describe('what is not audited', () => {
  it('refused writes, writes that change nothing, and reads leave the log untouched', async () => {
    const name = uniqueName('quiet');
    const reader = await createToken('audit-reader', ['read']);
    expect((await publish(ctx.app, bundleOf(name, 'one\n'))).statusCode).toBe(201);
    expect((await publish(ctx.app, bundleOf(name, 'two\n'))).statusCode).toBe(201);
    expect(
      (await ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/1.0.1`, headers: adminAuth }))
        .statusCode,
    ).toBe(200);
    const before = await newestId();

    const attempts: [string, number, () => Promise<{ statusCode: number }>][] = [
      ['identical republish', 200, () => publish(ctx.app, bundleOf(name, 'one\n'))],
      ['no token', 401, () => publish(ctx.app, bundleOf(name, 'three\n'), { headers: {} })],
      [
        'unknown token',
        401,
        () => publish(ctx.app, bundleOf(name, 'three\n'), { headers: bearer('skr_nope') }),
      ],
      [
        'read token',
        403,
        () => publish(ctx.app, bundleOf(name, 'three\n'), { headers: bearer(reader.secret) }),
      ],
      [
        'version conflict',
        409,
        () => publish(ctx.app, bundleOf(name, 'other\n'), { query: 'version=1.0.0' }),
      ],
      [
        'invalid skill',
        422,
        () => publish(ctx.app, files({ 'SKILL.md': skillMd({ name: 'Not Valid!', description: 'x' }) })),
      ],
      [
        'too large',
        413,
        () =>
          publish(
            ctx.app,
            files({ 'SKILL.md': skillMd({ name, description: 'x' }), 'big.bin': 'x'.repeat(300_000) }),
          ),
      ],
      [
        'unsupported type',
        415,
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/skills',
            headers: { ...adminAuth, 'content-type': 'image/png' },
            payload: Buffer.alloc(16),
          }),
      ],
      [
        'tag onto an unknown version',
        404,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/stable`,
            headers: adminAuth,
            payload: { version: '9.9.9' },
          }),
      ],
      [
        'tag onto a yanked version',
        409,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/stable`,
            headers: adminAuth,
            payload: { version: '1.0.1' },
          }),
      ],
      [
        'tag named like a version',
        400,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/2.0.0`,
            headers: adminAuth,
            payload: { version: '1.0.0' },
          }),
      ],
      [
        'yank of an unknown version',
        404,
        () => ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/9.9.9`, headers: adminAuth }),
      ],
      [
        'second yank',
        200,
        () => ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/1.0.1`, headers: adminAuth }),
      ],
      [
        'token change by a reader',
        403,
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/tokens',
            headers: bearer(reader.secret),
            payload: { name: 'x', scopes: ['admin'] },
          }),
      ],
      [
        'invalid token request',
        400,
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/tokens',
            headers: adminAuth,
            payload: { name: 'x', scopes: [] },
          }),
      ],
      [
        'revoke of an unknown token',
        404,
        () =>
          ctx.app.inject({
            method: 'DELETE',
            url: '/tokens/00000000-0000-4000-8000-000000000000',
            headers: adminAuth,
          }),
      ],
      ['read of content', 200, () => ctx.app.inject(`/skills/${name}/content`)],
      ['read of a bundle', 200, () => ctx.app.inject(`/skills/${name}/bundle`)],
      ['list of tokens', 200, () => ctx.app.inject({ url: '/tokens', headers: adminAuth })],
      ['the audit log itself', 200, () => ctx.app.inject({ url: '/audit', headers: adminAuth })],
    ];
    for (const [label, status, attempt] of attempts) {
      const res = await attempt();
      expect(res.statusCode, label).toBe(status);
      expect(await newestId(), label).toBe(before);
    }
    expect((await ctx.app.inject(`/skills/${name}/versions`)).json()).toHaveLength(2);
  });
});

describe('filters', () => {
  it('by actor, action, skill and time, combined, each page with its own cursor', async () => {
    const ci = await createToken('filter-ci', ['publish']);
    const other = await createToken('filter-other', ['publish']);
    const mine = uniqueName('filtered');
    const theirs = uniqueName('unfiltered');
    const startedAt = new Date(Date.now() - 1_000).toISOString();
    for (const body of ['one\n', 'two\n', 'three\n']) {
      expect((await publish(ctx.app, bundleOf(mine, body), { headers: bearer(ci.secret) })).statusCode).toBe(
        201,
      );
    }
    expect((await publish(ctx.app, bundleOf(theirs), { headers: bearer(other.secret) })).statusCode).toBe(
      201,
    );
    expect(
      (
        await ctx.app.inject({
          method: 'PUT',
          url: `/skills/${mine}/tags/stable`,
          headers: bearer(other.secret),
          payload: { version: '1.0.0' },
        })
      ).statusCode,
    ).toBe(200);

    const bySkill = await audit(ctx.app, `skill=${mine}`);
    expect(bySkill.map((item) => [item.action, item.version, item.actor])).toEqual([
      ['tag', '1.0.0', 'token:filter-other'],
      ['publish', '1.0.2', 'token:filter-ci'],
      ['publish', '1.0.1', 'token:filter-ci'],
      ['publish', '1.0.0', 'token:filter-ci'],
    ]);
    const byActor = await audit(ctx.app, 'actor=token:filter-other');
    expect(byActor.map((item) => [item.action, item.skill])).toEqual([
      ['tag', mine],
      ['publish', theirs],
    ]);
    expect((await audit(ctx.app, `actor=token:filter-ci&action=publish&skill=${mine}`)).length).toBe(3);
    expect(await audit(ctx.app, `actor=token:filter-ci&action=tag&skill=${mine}`)).toEqual([]);
    const tokenChanges = await audit(ctx.app, 'action=token.create');
    expect(tokenChanges.length).toBeGreaterThanOrEqual(2);
    expect(tokenChanges.every((item) => item.action === 'token.create')).toBe(true);
    expect(await audit(ctx.app, 'skill=no-such-skill-in-the-log')).toEqual([]);

    // Time: since is inclusive, until exclusive.
    const recent = await audit(ctx.app, `skill=${mine}&since=${encodeURIComponent(startedAt)}`);
    expect(recent).toHaveLength(4);
    const oldest = bySkill.at(-1)!;
    expect(
      (await audit(ctx.app, `skill=${mine}&until=${encodeURIComponent(oldest.at)}`)).map((item) => item.id),
    ).not.toContain(oldest.id);
    expect(
      await audit(ctx.app, `skill=${mine}&since=2000-01-01T00:00:00%2B02:00&until=2000-01-02T00:00:00Z`),
    ).toEqual([]);

    // Paging within a filter: two pages of two, then none.
    const first = (await ctx.app.inject({ url: `/audit?skill=${mine}&limit=2`, headers: adminAuth })).json();
    expect(first.items.map((item: AuditItem) => item.id)).toEqual(bySkill.slice(0, 2).map((item) => item.id));
    const second = (
      await ctx.app.inject({
        url: `/audit?skill=${mine}&limit=2&cursor=${first.nextCursor}`,
        headers: adminAuth,
      })
    ).json();
    expect(second.items.map((item: AuditItem) => item.id)).toEqual(bySkill.slice(2).map((item) => item.id));
    expect(second.nextCursor).toBeNull();
  });

  it('is documented: every parameter, the page shape and the problems', async () => {
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            tags: string[];
            summary: string;
            parameters: { name: string; in: string }[];
            responses: Record<string, { content?: Record<string, { schema: { properties?: object } }> }>;
          }
        >
      >;
    };
    const operation = doc.paths['/audit']?.get;
    expect(operation?.operationId).toBe('listAudit');
    expect(operation?.summary).toBeTruthy();
    expect(operation?.tags).toEqual(['tokens']);
    expect(operation?.parameters.map((parameter) => parameter.name).sort()).toEqual(
      ['action', 'actor', 'before', 'cursor', 'limit', 'namespace', 'since', 'skill', 'until'].sort(),
    );
    const page = Object.values(operation?.responses['200']?.content ?? {})[0]?.schema;
    expect(Object.keys(page?.properties ?? {}).sort()).toEqual(['items', 'nextCursor']);
    for (const status of ['400', '401', '403']) {
      expect(Object.keys(operation?.responses[status]?.content ?? {})).toEqual(['application/problem+json']);
    }
  });
});

describe('paging', () => {
  it('walks the whole log with `before`, newest first, every entry exactly once', async () => {
    for (let i = 0; i < 12; i += 1) await createToken(`paging-${i}`, ['read']);
    const all = await audit(ctx.app);
    expect(all.length).toBeGreaterThanOrEqual(12);

    const walked: AuditItem[] = [];
    let query = 'limit=5';
    for (let pages = 0; pages < 1_000; pages += 1) {
      const page = await audit(ctx.app, query);
      expect(page.length).toBeLessThanOrEqual(5);
      walked.push(...page);
      if (page.length < 5) break;
      query = `limit=5&before=${page.at(-1)!.id}`;
    }
    expect(walked).toEqual(all);
    expect(new Set(walked.map((item) => item.id)).size).toBe(walked.length);

    // Past the oldest entry: an empty page, not an error.
    expect(await audit(ctx.app, `before=${all.at(-1)!.id}`)).toEqual([]);
    expect(await audit(ctx.app, 'before=1')).toEqual([]);
    // The default page is 50 entries.
    expect((await audit(ctx.app, '')).length).toBe(Math.min(50, all.length));
  });

  it('walks the whole log with nextCursor, newest first, every entry exactly once, also while writes go on', async () => {
    for (let i = 0; i < 7; i += 1) await createToken(`cursor-${i}`, ['read']);
    const all = await audit(ctx.app);
    const walked: AuditItem[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await ctx.app.inject({
        url: `/audit?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        headers: adminAuth,
      });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { items: AuditItem[]; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(4);
      walked.push(...page.items);
      // A full page that is not the last has a cursor; the last page has none.
      if (page.nextCursor) expect(page.items).toHaveLength(4);
      cursor = page.nextCursor;
      // New entries while walking do not shift the pages still to come.
      if (pages === 0) await createToken('written-while-paging', ['read']);
      pages += 1;
    } while (cursor && pages < 1_000);
    expect(walked).toEqual(all);
    expect(cursor).toBeNull();

    // Exactly a page's worth left: the last full page says there is nothing after it.
    const exact = await ctx.app.inject({ url: `/audit?limit=${all.length + 1}`, headers: adminAuth });
    expect(exact.json().items).toHaveLength(all.length + 1);
    expect(exact.json().nextCursor).toBeNull();
  });

  it('refuses malformed paging parameters with 400 problems', async () => {
    for (const query of [
      'limit=0',
      'limit=501',
      'limit=ten',
      'before=0',
      'before=-3',
      'before=abc',
      'action=delete',
      'since=yesterday',
      'until=2025-13-01T00:00:00Z',
      'actor=',
    ]) {
      const res = await ctx.app.inject({ url: `/audit?${query}`, headers: adminAuth });
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type'], query).toMatch(/^application\/problem\+json/);
    }
  });

  it('refuses a cursor it did not issue with a 400 naming the parameter', async () => {
    const forged = [
      'not-a-cursor',
      Buffer.from('{"before":"9"}').toString('base64url'),
      Buffer.from('{"after":"x"}').toString('base64url'),
      Buffer.from('{"before":-1}').toString('base64url'),
      Buffer.from('[]').toString('base64url'),
    ];
    for (const cursor of forged) {
      const res = await ctx.app.inject({ url: `/audit?cursor=${cursor}`, headers: adminAuth });
      expect(res.statusCode, cursor).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 400, parameter: 'cursor' });
      expect(res.json().detail).toContain('nextCursor');
    }
    const page = (await ctx.app.inject({ url: '/audit?limit=1', headers: adminAuth })).json();
    expect(page.nextCursor).toEqual(expect.any(String));
    const both = await ctx.app.inject({
      url: `/audit?cursor=${page.nextCursor}&before=5`,
      headers: adminAuth,
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().parameters).toEqual(['cursor', 'before']);
  });

  it('is readable by admin-scope tokens only', async () => {
    const admin = await createToken('audit-reader-admin', ['admin']);
    const publisher = await createToken('audit-publisher', ['publish']);
    expect((await ctx.app.inject({ url: '/audit', headers: bearer(admin.secret) })).statusCode).toBe(200);
    expect((await ctx.app.inject({ url: '/audit', headers: bearer(publisher.secret) })).statusCode).toBe(403);
    expect((await ctx.app.inject('/audit')).statusCode).toBe(401);
  });
});
