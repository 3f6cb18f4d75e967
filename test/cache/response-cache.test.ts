import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomRequestId } from '../../src/requests/request-id.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

/**
 * The response cache answers repeated public GETs before Fastify runs (src/cache/response-cache.ts).
 * app.inject never reaches it (inject calls Fastify's handler directly), so these tests talk to a
 * listening server over real HTTP and compare what the cache answers with what the route answered.
 */

let ctx: TestApp;
let base: string;

beforeAll(async () => {
  ctx = await createTestApp();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => ctx?.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { method, headers });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

function hits(): number {
  return ctx.app.responseCache.counters.hits + ctx.app.responseCache.counters.notModified;
}

/** Headers that differ between any two answers, whoever sends them. */
function comparable(headers: Record<string, string>): Record<string, string> {
  const { date: _date, 'x-request-id': _id, ...rest } = headers;
  return rest;
}

async function publishSkill(name: string, body: string, query = '') {
  const res = await publish(
    ctx.app,
    files({
      'SKILL.md': skillMd({ name, description: `The ${name} skill.`, body }),
      'references/notes.md': `Notes for ${body}\n`,
    }),
    { query },
  );
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json() as { version: string };
}

describe('response cache', () => {
  it('repeats exactly what the route answered: status, headers and bytes, for every cached read', async () => {
    const name = uniqueName('repeat');
    await publishSkill(name, 'Body one.', 'version=1.0.0');
    const paths = [
      `/skills/${name}/content`,
      `/skills/${name}/content?format=xml`,
      `/skills/${name}/content?format=json`,
      `/skills/${name}/content?version=1.0.0`,
      `/skills/${name}/files/references/notes.md`,
      `/skills/${name}/bundle`,
      `/skills/${name}/bundle?format=zip&version=1.0.0`,
      `/skills/${name}`,
      `/skills/${name}/versions`,
      `/skills?limit=5&q=${name}`,
    ];
    for (const path of paths) {
      const first = await get(path);
      expect(first.status, path).toBe(200);
      const before = hits();
      const second = await get(path);
      expect(hits(), `${path} served from the cache`).toBe(before + 1);
      expect(second.status, path).toBe(200);
      expect(second.body.equals(first.body), path).toBe(true);
      expect(comparable(second.headers), path).toEqual(comparable(first.headers));
      expect(second.headers['x-request-id'], path).toMatch(/^[0-9a-f-]{36}$/);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
  });

  it('answers If-None-Match with 304 and the validators, like the route does', async () => {
    const name = uniqueName('revalidate');
    await publishSkill(name, 'Body for 304.');
    const path = `/skills/${name}/content`;
    const first = await get(path);
    const etag = first.headers.etag!;
    // Through the route (the entry is stored by the first 200) and then through the cache.
    const before = hits();
    const cached = await get(path, { 'if-none-match': etag });
    expect(hits()).toBe(before + 1);
    expect(cached.status).toBe(304);
    expect(cached.body.byteLength).toBe(0);
    expect(cached.headers.etag).toBe(etag);
    expect(cached.headers['cache-control']).toBe(first.headers['cache-control']);
    // Weak comparison and lists, as RFC 9110 asks.
    expect((await get(path, { 'if-none-match': `"nope", W/${etag}` })).status).toBe(304);
    expect((await get(path, { 'if-none-match': '*' })).status).toBe(304);
    const stale = await get(path, { 'if-none-match': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(first.body)).toBe(true);
  });

  it('keeps the validators of a 304 the route answered, for clients that only revalidate', async () => {
    const name = uniqueName('revalidate-only');
    await publishSkill(name, 'Body polled with If-None-Match.', 'version=1.0.0');
    const path = `/skills/${name}/content`;
    const first = await get(path);
    const etag = first.headers.etag!;
    // A write to the skill that leaves its content as it was: the entry is stale, the ETag is not.
    const moved = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(moved.statusCode).toBe(200);
    const before = hits();
    const throughRoute = await get(path, { 'if-none-match': etag });
    expect(throughRoute.status).toBe(304);
    expect(hits()).toBe(before);
    const cached = await get(path, { 'if-none-match': etag });
    expect(hits()).toBe(before + 1);
    expect(cached.status).toBe(304);
    expect(comparable(cached.headers)).toEqual(comparable(throughRoute.headers));
    // A body is still the route's to send; its 200 completes the entry.
    const full = await get(path);
    expect(hits()).toBe(before + 1);
    expect(full.status).toBe(200);
    expect(full.body.equals(first.body)).toBe(true);
    const again = await get(path);
    expect(hits()).toBe(before + 2);
    expect(comparable(again.headers)).toEqual(comparable(full.headers));
  });

  it('echoes a caller request id and answers HEAD without a body', async () => {
    const name = uniqueName('head');
    await publishSkill(name, 'Body for HEAD.');
    const path = `/skills/${name}/content`;
    const first = await get(path);
    const before = hits();
    const traced = await get(path, { 'x-request-id': 'trace-123' });
    expect(traced.headers['x-request-id']).toBe('trace-123');
    const head = await get(path, {}, 'HEAD');
    expect(hits()).toBe(before + 2);
    expect(head.status).toBe(200);
    expect(head.body.byteLength).toBe(0);
    expect(head.headers['content-length']).toBe(String(first.body.byteLength));
  });

  it('never serves a stale answer: a publish, a tag move or a yank shows on the very next request', async () => {
    const name = uniqueName('fresh');
    await publishSkill(name, 'Version one.', 'version=1.0.0');
    const latest = `/skills/${name}/content`;
    const stable = `/skills/${name}/content?tag=stable`;
    const page = `/skills?limit=500&q=${name}`;
    expect((await get(latest)).body.toString()).toContain('Version one.');
    expect((await get(latest)).body.toString()).toContain('Version one.');
    const pageBefore = await get(page);
    await get(page);

    await publishSkill(name, 'Version two.', 'version=2.0.0');
    expect((await get(latest)).body.toString()).toContain('Version two.');
    const pageAfter = await get(page);
    expect(pageAfter.headers.etag).not.toBe(pageBefore.headers.etag);
    expect(pageAfter.body.toString()).toContain('"version":"2.0.0"');

    const move = (version: string) =>
      ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/stable`,
        headers: adminAuth,
        payload: { version },
      });
    expect((await move('1.0.0')).statusCode).toBe(200);
    expect((await get(stable)).body.toString()).toContain('Version one.');
    expect((await get(stable)).body.toString()).toContain('Version one.');
    expect((await move('2.0.0')).statusCode).toBe(200);
    expect((await get(stable)).body.toString()).toContain('Version two.');

    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/2.0.0`,
      headers: adminAuth,
    });
    expect(yank.statusCode).toBe(200);
    expect((await get(latest)).body.toString()).toContain('Version one.');
    // The exact version stays fetchable after its yank, from the cache too.
    const exact = `/skills/${name}/content?version=2.0.0`;
    expect((await get(exact)).body.toString()).toContain('Version two.');
    expect((await get(exact)).body.toString()).toContain('Version two.');
  });

  it('lets requests with credentials through to the routes, which check them', async () => {
    const name = uniqueName('credentials');
    await publishSkill(name, 'Body behind a token.');
    const path = `/skills/${name}/content`;
    await get(path);
    const before = hits();
    const refused = await get(path, { authorization: 'Bearer not-a-real-token-at-all' });
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await get(path, adminAuth)).status).toBe(200);
    expect(hits()).toBe(before);
  });

  it('goes through the routes while the catalogue state is not live, and stays correct', async () => {
    const name = uniqueName('not-live');
    await publishSkill(name, 'Body while not live.');
    const path = `/skills/${name}/content`;
    await get(path);
    const { state } = ctx.app.registry.cache;
    const wasLive = state.live;
    state.setLive(false);
    try {
      const before = hits();
      const answer = await get(path);
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toContain('Body while not live.');
      expect(hits()).toBe(before);
    } finally {
      state.setLive(wasLive);
    }
  });

  it('records what the routes record: metrics under the route pattern and layer-2 loads', async () => {
    const name = uniqueName('counted');
    await publishSkill(name, 'Counted body.');
    const path = `/skills/${name}/content`;
    const series = () => {
      const snapshot = ctx.app.metrics.requests.durations.get();
      const count = (status: string) =>
        snapshot.values.find(
          (v) =>
            v.metricName === 'skillreg_http_request_duration_seconds_count' &&
            v.labels.route === '/skills/:name/content' &&
            v.labels.status_code === status,
        )?.value ?? 0;
      return { ok: count('200'), notModified: count('304') };
    };
    const loads = async () => ((await ctx.app.metrics.skillLoads.get()).values[0]?.value ?? 0) as number;
    const first = await get(path);
    const before = { ...series(), loads: await loads(), hits: hits() };
    await get(path);
    await get(path);
    await get(path, { 'if-none-match': first.headers.etag! });
    expect(hits()).toBe(before.hits + 3);
    const after = series();
    expect(after.ok - before.ok).toBe(2);
    expect(after.notModified - before.notModified).toBe(1);
    expect((await loads()) - before.loads).toBe(2);
    const scrape = (await ctx.app.inject('/metrics')).body;
    const answered = /^skillreg_response_cache_answers_total\{result="body"\} (\d+)$/m.exec(scrape);
    expect(Number(answered?.[1])).toBe(ctx.app.responseCache.counters.hits);
    expect(scrape).toMatch(/^skillreg_response_cache_entries [1-9]/m);
  });

  it('is off when reads need a token', async () => {
    const guarded = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
    try {
      await guarded.app.listen({ port: 0, host: '127.0.0.1' });
      const address = guarded.app.server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      const url = `http://127.0.0.1:${address.port}/skills`;
      for (let i = 0; i < 3; i++) expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: adminAuth })).status).toBe(200);
      expect(guarded.app.responseCache.counters.stored).toBe(0);
      expect(guarded.app.responseCache.counters.hits).toBe(0);
    } finally {
      await guarded.close();
    }
  });
});

describe('randomRequestId', () => {
  it('makes version 4 UUIDs, never the same twice, across refills of its random pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const id = randomRequestId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2_000);
  });
});
