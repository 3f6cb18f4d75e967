import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { Database } from '../../db/client.js';
import { PRIMARY_REASONS } from '../../db/read-routing.js';
import type { Registry as SkillRegistry } from '../../services/registry.js';
import { RequestMetrics } from '../request-metrics.js';

/**
 * Prometheus metrics, served by routes/metrics.ts at GET /metrics (public, like /livez: scrape it on an
 * internal port or keep it off the public load balancer). Every app gets its own Registry, so several apps in one
 * process (the tests) never share or collide on metrics.
 *
 * - skillreg_http_request_duration_seconds{method, route, status_code}: route is the route pattern
 *   (/skills/:name/content), never the raw URL, so the label set stays bounded; `unmatched` for 404s
 *   that hit no route.
 * - skillreg_skill_loads_total: layer-2 loads (HTTP content route and MCP). Not labelled by skill: one
 *   series per skill would grow with the catalogue (a scrape of megabytes); loads per skill are
 *   kept in the database (skills.load_count, last_loaded_at) and order budgeted prompts.
 * - skillreg_publishes_total{outcome}: POST /skills answered 201 created, 200 unchanged, 4xx refused
 *   (invalid bundle, conflict, limits, auth) or 5xx error.
 * - skillreg_conditional_requests_total{route, result}: GETs sent with If-None-Match, answered 304
 *   (not_modified) or with a body (modified): how much agent polling costs nothing.
 * - skillreg_read_cache_lookups_total{kind, result}, skillreg_read_cache_bytes, skillreg_read_cache_entries,
 *   skillreg_read_cache_live: the in-process read cache (src/cache) and whether its revision is live.
 * - skillreg_db_pool_connections, skillreg_db_pool_idle_connections, skillreg_db_pool_waiting_requests:
 *   the pg Pool read at scrape time (embedded PGlite reports one connection, never idle or queued);
 *   skillreg_database_info{kind} says which.
 * - With DATABASE_READ_URL: skillreg_db_reads_total{server, reason} (plain reads answered by the standby,
 *   or by the primary and why), skillreg_db_standby_up and skillreg_db_standby_lag_bytes.
 * - the prom-client default process and Node.js metrics (process_*, nodejs_*).
 */
export interface Metrics {
  registry: Registry;
  /** Request durations and conditional GETs, recorded by the onResponse hook and the response cache. */
  requests: RequestMetrics;
  skillLoads: Counter;
  publishes: Counter<'outcome'>;
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

async function metricsPlugin(app: FastifyInstance, options: { registry: SkillRegistry }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new RequestMetrics();
  registry.registerMetric(requests.durations as unknown as Metric);
  registry.registerMetric(requests.conditional as unknown as Metric);
  const skillLoads = new Counter({
    name: 'skillreg_skill_loads_total',
    help: 'Layer-2 loads (skill bodies served over HTTP or MCP); per skill in the database (load_count)',
    registers,
  });
  const publishes = new Counter({
    name: 'skillreg_publishes_total',
    help: 'POST /skills by outcome: created (201), unchanged (200), refused (4xx), error (5xx)',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of PUBLISH_OUTCOMES) publishes.inc({ outcome }, 0);

  const { database } = options.registry;
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

  // DATABASE_READ_URL: where plain reads went (src/db/read-routing.ts), read at scrape time.
  const replica = database.readReplica;
  if (replica) {
    new Counter({
      name: 'skillreg_db_reads_total',
      help: 'Plain read statements by the server that answered them: standby, or primary with why (pinned, fence, behind, down, failed)',
      labelNames: ['server', 'reason'] as const,
      registers,
      collect() {
        this.reset();
        const stats = replica.stats();
        this.inc({ server: 'standby', reason: 'current' }, stats.standbyReads);
        for (const reason of PRIMARY_REASONS) {
          this.inc({ server: 'primary', reason }, stats.primaryReads[reason]);
        }
      },
    });
    new Gauge({
      name: 'skillreg_db_standby_up',
      help: '1 while the read replica (DATABASE_READ_URL) answers as a standby in recovery; 0 while reads bypass it',
      registers,
      collect() {
        this.set(replica.stats().standbyUp ? 1 : 0);
      },
    });
    new Gauge({
      name: 'skillreg_db_standby_lag_bytes',
      help: "WAL bytes between the primary's last sampled position and the standby's replay",
      registers,
      collect() {
        this.set(replica.stats().lagBytes);
      },
    });
  }

  // The read cache (src/cache), read at scrape time.
  const readCache = options.registry.cache;
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

  options.registry.usage.onLoad(() => skillLoads.inc());

  // Callback style, not async: an async hook costs a promise per request on the hottest path.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = routeOf(request);
    const status = reply.statusCode;
    requests.record(
      request.method,
      route,
      status,
      reply.elapsedTime / 1000,
      Boolean(request.headers['if-none-match']),
    );
    if (request.method === 'POST' && (route === '/skills' || route === '/namespaces/:namespace/skills')) {
      publishes.inc({ outcome: publishOutcome(status) });
    }
    done();
  });

  app.decorate('metrics', { registry, requests, skillLoads, publishes });
}

export default fp(metricsPlugin, { name: 'metrics' });
