import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../../db/client.js';

/**
 * Prometheus metrics, served by routes/metrics.ts at GET /metrics (public, like /livez: scrape it on an
 * internal port or keep it off the public load balancer). Every app gets its own Registry, so several apps in one
 * process (the tests) never share or collide on metrics.
 *
 * - skillreg_http_request_duration_seconds{method, route, status_code}: route is the route pattern
 *   (/skills/:name/content), never the raw URL, so the label set stays bounded; `unmatched` for 404s
 *   that hit no route.
 * - skillreg_skill_loads_total{skill}: layer-2 loads (HTTP content route and MCP), the signal for
 *   ranking skills by use.
 * - skillreg_publishes_total{outcome}: POST /skills answered 201 created, 200 unchanged, 4xx refused
 *   (invalid bundle, conflict, limits, auth) or 5xx error.
 * - skillreg_conditional_requests_total{route, result}: GETs sent with If-None-Match, answered 304
 *   (not_modified) or with a body (modified): how much agent polling costs nothing.
 * - skillreg_read_cache_lookups_total{kind, result}, skillreg_read_cache_bytes, skillreg_read_cache_entries,
 *   skillreg_read_cache_live: the in-process read cache (src/cache) and whether its revision is live.
 * - skillreg_db_pool_connections, skillreg_db_pool_idle_connections, skillreg_db_pool_waiting_requests:
 *   the pg Pool read at scrape time (embedded PGlite reports one connection, never idle or queued);
 *   skillreg_database_info{kind} says which.
 * - the prom-client default process and Node.js metrics (process_*, nodejs_*).
 */
export interface Metrics {
  registry: Registry;
  requestDuration: Histogram<'method' | 'route' | 'status_code'>;
  skillLoads: Counter<'skill'>;
  publishes: Counter<'outcome'>;
  conditionalRequests: Counter<'route' | 'result'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export const PUBLISH_OUTCOMES = ['created', 'unchanged', 'refused', 'error'] as const;

/** The pg Pool counters, or PGlite's single in-process connection. */
export function poolState(database: Database): { total: number; idle: number; waiting: number } {
  const client = (database.db as unknown as { $client?: Record<string, unknown> }).$client;
  if (database.kind === 'postgres' && client && typeof client.totalCount === 'number') {
    return {
      total: client.totalCount,
      idle: Number(client.idleCount ?? 0),
      waiting: Number(client.waitingCount ?? 0),
    };
  }
  return { total: 1, idle: 0, waiting: 0 };
}

function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

function publishOutcome(status: number): (typeof PUBLISH_OUTCOMES)[number] {
  if (status === 201) return 'created';
  if (status === 200) return 'unchanged';
  return status >= 500 ? 'error' : 'refused';
}

async function metricsPlugin(app: FastifyInstance) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requestDuration = new Histogram({
    name: 'skillreg_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const skillLoads = new Counter({
    name: 'skillreg_skill_loads_total',
    help: 'Layer-2 loads (skill bodies served over HTTP or MCP), by skill',
    labelNames: ['skill'] as const,
    registers,
  });
  const publishes = new Counter({
    name: 'skillreg_publishes_total',
    help: 'POST /skills by outcome: created (201), unchanged (200), refused (4xx), error (5xx)',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of PUBLISH_OUTCOMES) publishes.inc({ outcome }, 0);
  const conditionalRequests = new Counter({
    name: 'skillreg_conditional_requests_total',
    help: 'GET/HEAD requests with If-None-Match, by route: not_modified (304) or modified (answered with a body)',
    labelNames: ['route', 'result'] as const,
    registers,
  });

  const { database } = app;
  new Gauge({
    name: 'skillreg_database_info',
    help: 'The database in use: kind is postgres (DATABASE_URL) or pglite (embedded)',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      this.set({ kind: database.kind }, 1);
    },
  });
  new Gauge({
    name: 'skillreg_db_pool_connections',
    help: 'Open database connections (pg Pool totalCount; 1 for embedded PGlite)',
    registers,
    collect() {
      this.set(poolState(database).total);
    },
  });
  new Gauge({
    name: 'skillreg_db_pool_idle_connections',
    help: 'Open database connections not in use (pg Pool idleCount; 0 for embedded PGlite)',
    registers,
    collect() {
      this.set(poolState(database).idle);
    },
  });
  new Gauge({
    name: 'skillreg_db_pool_waiting_requests',
    help: 'Queries waiting for a free connection (pg Pool waitingCount; 0 for embedded PGlite)',
    registers,
    collect() {
      this.set(poolState(database).waiting);
    },
  });

  // The read cache (src/cache), read at scrape time.
  const { readCache } = app;
  new Counter({
    name: 'skillreg_read_cache_lookups_total',
    help: 'Read cache lookups by kind (immutable, skill, catalogue) and result (hit, miss)',
    labelNames: ['kind', 'result'] as const,
    registers,
    collect() {
      this.reset();
      for (const kind of ['immutable', 'skill', 'catalogue'] as const) {
        this.inc({ kind, result: 'hit' }, readCache.counters.hits[kind]);
        this.inc({ kind, result: 'miss' }, readCache.counters.misses[kind]);
      }
    },
  });
  new Gauge({
    name: 'skillreg_read_cache_bytes',
    help: 'Bytes held by the read cache (bounded by SKILLREG_CACHE_MB)',
    registers,
    collect() {
      this.set(readCache.stats().bytes);
    },
  });
  new Gauge({
    name: 'skillreg_read_cache_entries',
    help: 'Entries held by the read cache',
    registers,
    collect() {
      this.set(readCache.stats().entries);
    },
  });
  new Gauge({
    name: 'skillreg_read_cache_live',
    help: '1 while the catalogue revision is known without a query (change feed listening, or embedded PGlite); 0 while every request reads the revision row',
    registers,
    collect() {
      this.set(readCache.state.live ? 1 : 0);
    },
  });

  app.repositories.loads.onRecord((skill) => skillLoads.inc({ skill }));

  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = routeOf(request);
    const status = reply.statusCode;
    requestDuration.observe(
      { method: request.method, route, status_code: String(status) },
      reply.elapsedTime / 1000,
    );
    if (request.method === 'POST' && route === '/skills') {
      publishes.inc({ outcome: publishOutcome(status) });
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && request.headers['if-none-match']) {
      if (status === 304) conditionalRequests.inc({ route, result: 'not_modified' });
      else if (status >= 200 && status < 300) conditionalRequests.inc({ route, result: 'modified' });
    }
  });

  app.decorate('metrics', { registry, requestDuration, skillLoads, publishes, conditionalRequests });
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['registry-context'] });
