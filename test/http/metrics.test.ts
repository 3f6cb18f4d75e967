import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestMetrics } from '../../src/http/request-metrics.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (enough of it for these checks). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted),
  );
  return found.reduce((sum, sample) => sum + sample.value, 0);
}

let ctx: TestApp;
async function scrape(app = ctx.app): Promise<Sample[]> {
  const res = await app.inject('/metrics');
  expect(res.statusCode).toBe(200);
  return parseMetrics(res.body);
}

beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

describe('GET /metrics', () => {
  it('serves the Prometheus text format with the default process metrics', async () => {
    const res = await ctx.app.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE skillreg_http_request_duration_seconds histogram');
    const samples = parseMetrics(res.body);
    const names = new Set(samples.map((sample) => sample.name));
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(names, name).toContain(name);
    }
    expect(value(samples, 'skillreg_database_info', { kind: ctx.database.kind })).toBe(1);
    // Outcomes exist from the start, so rate() and ratios work before the first publish.
    for (const outcome of ['created', 'unchanged', 'refused', 'error']) {
      expect(samples.some((s) => s.name === 'skillreg_publishes_total' && s.labels.outcome === outcome)).toBe(
        true,
      );
    }
  });

  it('counts publishes by outcome', async () => {
    const before = await scrape();
    const name = uniqueName('metrics');
    const bundle = files({ 'SKILL.md': skillMd({ name, description: 'Counted.' }) });
    expect((await publish(ctx.app, bundle)).statusCode).toBe(201);
    expect((await publish(ctx.app, bundle)).statusCode).toBe(200);
    expect((await publish(ctx.app, files({ 'README.md': 'no skill here' }))).statusCode).toBe(422);
    expect((await publish(ctx.app, bundle, { headers: {} })).statusCode).toBe(401);
    const after = await scrape();
    const delta = (outcome: string) =>
      value(after, 'skillreg_publishes_total', { outcome }) -
      value(before, 'skillreg_publishes_total', { outcome });
    expect(delta('created')).toBe(1);
    expect(delta('unchanged')).toBe(1);
    expect(delta('refused')).toBe(2);
    expect(delta('error')).toBe(0);
  });

  it('counts layer-2 loads, conditional GETs, and durations by route pattern', async () => {
    const loadsBefore = value(await scrape(), 'skillreg_skill_loads_total');
    const name = uniqueName('loaded');
    await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Loaded.' }) }));
    const url = `/skills/${name}/content`;
    const first = await ctx.app.inject(url);
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect((await ctx.app.inject(url)).statusCode).toBe(200);
    expect((await ctx.app.inject({ url, headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    expect((await ctx.app.inject({ url, headers: { 'if-none-match': '"stale"' } })).statusCode).toBe(200);
    expect((await ctx.app.inject('/no/such/route/for-metrics')).statusCode).toBe(404);

    const samples = await scrape();
    // Three bodies were served; the 304 served none and is not a load.
    expect(value(samples, 'skillreg_skill_loads_total') - loadsBefore).toBe(3);
    // One series in all, not one per skill: 100,000 skills would otherwise make a 7 MB scrape.
    expect(samples.filter((s) => s.name === 'skillreg_skill_loads_total')).toHaveLength(1);
    const route = '/skills/:name/content';
    expect(value(samples, 'skillreg_conditional_requests_total', { route, result: 'not_modified' })).toBe(1);
    expect(value(samples, 'skillreg_conditional_requests_total', { route, result: 'modified' })).toBe(1);
    const duration = 'skillreg_http_request_duration_seconds_count';
    expect(value(samples, duration, { method: 'GET', route, status_code: '200' })).toBe(3);
    expect(value(samples, duration, { method: 'GET', route, status_code: '304' })).toBe(1);
    expect(value(samples, duration, { route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    const inf = samples.find(
      (s) =>
        s.name === 'skillreg_http_request_duration_seconds_bucket' &&
        s.labels.route === route &&
        s.labels.status_code === '200' &&
        s.labels.le === '+Inf',
    );
    expect(inf?.value).toBe(3);

    // Bounded cardinality: no raw URL (skill name, unknown path) ever becomes a route label.
    const routes = new Set(
      samples.filter((s) => s.name.startsWith('skillreg_http_request')).map((s) => s.labels.route),
    );
    for (const label of routes) {
      expect(label).not.toContain(name);
      expect(label).not.toContain('for-metrics');
    }
  });

  it('reports the database pool state at scrape time', async () => {
    const samples = await scrape();
    const total = value(samples, 'skillreg_db_pool_connections');
    const idle = value(samples, 'skillreg_db_pool_idle_connections');
    const waiting = value(samples, 'skillreg_db_pool_waiting_requests');
    if (ctx.database.kind === 'pglite') {
      expect([total, idle, waiting]).toEqual([1, 0, 0]);
    } else {
      expect(total).toBeGreaterThanOrEqual(1);
      expect(idle).toBeGreaterThanOrEqual(0);
      expect(idle).toBeLessThanOrEqual(total);
      expect(waiting).toBe(0);
    }
  });

  it('keeps a registry per app: two apps in one process count separately', async () => {
    const other = await createTestApp();
    try {
      const name = uniqueName('separate');
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Only in the first app.' }) }));
      await ctx.app.inject(`/skills/${name}/content`);
      expect(value(await scrape(ctx.app), 'skillreg_skill_loads_total')).toBeGreaterThanOrEqual(1);
      const samples = await scrape(other.app);
      expect(value(samples, 'skillreg_skill_loads_total')).toBe(0);
      expect(value(samples, 'skillreg_publishes_total', { outcome: 'created' })).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('stays public when reads need a token, and is documented in OpenAPI', async () => {
    const guarded = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
    try {
      expect((await guarded.app.inject('/skills')).statusCode).toBe(401);
      expect((await guarded.app.inject('/metrics')).statusCode).toBe(200);
    } finally {
      await guarded.close();
    }
    const openapi = (await ctx.app.inject('/openapi.json')).json();
    const operation = openapi.paths['/metrics'].get;
    expect(operation).toMatchObject({ operationId: 'getMetrics', tags: ['operations'] });
    expect(operation.summary).toBeTruthy();
    expect(Object.keys(operation.responses['200'].content)[0]).toMatch(/^text\/plain/);
  });
});

describe('RequestMetrics', () => {
  it('records into the same series on every request, and into new ones after a reset', () => {
    const metrics = new RequestMetrics();
    const count = () =>
      metrics.durations
        .get()
        .values.filter((v) => v.metricName === 'skillreg_http_request_duration_seconds_count')
        .map((v) => [v.labels.method, v.labels.status_code, v.value]);
    for (let i = 0; i < 3; i++) metrics.record('GET', '/a', 200, 0.001, false);
    metrics.record('HEAD', '/a', 200, 0.001, false);
    expect(count()).toEqual([
      ['GET', '200', 3],
      ['HEAD', '200', 1],
    ]);
    // A conditional series appears with the first conditional request, not before.
    expect(metrics.conditional.get().values).toEqual([]);
    metrics.record('GET', '/a', 200, 0.001, true);
    metrics.record('POST', '/a', 200, 0.001, true);
    expect(metrics.conditional.get().values).toEqual([
      { labels: { route: '/a', result: 'modified' }, value: 1 },
    ]);
    metrics.durations.reset();
    metrics.conditional.reset();
    metrics.record('GET', '/a', 200, 0.001, true);
    expect(count()).toEqual([['GET', '200', 1]]);
    expect(metrics.conditional.get().values).toEqual([
      { labels: { route: '/a', result: 'modified' }, value: 1 },
    ]);
  });
});
