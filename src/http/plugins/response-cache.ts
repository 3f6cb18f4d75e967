import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge } from 'prom-client';
import type { CatalogueState } from '../../cache/catalogue-state.js';
import { RESPONSE_CACHE_SHARE, ResponseCache, type ResponseCacheSpec } from '../../cache/response-cache.js';
import { bufferBody } from '../../render/response-bodies.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Repeats routes' public 200 answers before Fastify runs (src/cache/response-cache.ts). */
    responseCache: ResponseCache;
  }
  interface FastifyRequest {
    /** Set by a route (through keepResponse) when its answer (200, or 304) to this URL may be repeated. */
    responseCacheSpec: ResponseCacheSpec | null;
  }
}

/**
 * Lets a route's answer be repeated by the response cache. Only a plain public GET qualifies: a
 * request carrying credentials is answered for that token holder and always goes through the route.
 * Called for a 304 too, so that the validators are kept for clients that only revalidate.
 */
export function keepResponse(request: FastifyRequest, spec: ResponseCacheSpec): void {
  if (request.method === 'GET' && request.headers.authorization === undefined) {
    request.responseCacheSpec = spec;
  }
}

/**
 * Whether answers may be repeated without running the route at all: not when reads need a token or
 * are rate limited (both are decided per request), and not when every request should be logged.
 */
export function responseCacheAllowed(app: FastifyInstance): boolean {
  const { config } = app;
  return (
    !config.readAuth &&
    config.rateLimits.reads === 0 &&
    config.logLevel !== 'debug' &&
    config.logLevel !== 'trace'
  );
}

async function responseCachePlugin(app: FastifyInstance, options: { state: CatalogueState }) {
  const cache = new ResponseCache({
    maxBytes: responseCacheAllowed(app) ? Math.floor(app.config.cacheBytes * RESPONSE_CACHE_SHARE) : 0,
    state: options.state,
    metrics: app.metrics.requests,
  });
  app.decorate('responseCache', cache);
  app.decorateRequest('responseCacheSpec', null);

  const registers = [app.metrics.registry];
  new Counter({
    name: 'skillreg_response_cache_answers_total',
    help: 'Public GETs answered by the response cache without running a route: body (200) or not_modified (304)',
    labelNames: ['result'] as const,
    registers,
    collect() {
      this.reset();
      this.inc({ result: 'body' }, cache.counters.hits);
      this.inc({ result: 'not_modified' }, cache.counters.notModified);
    },
  });
  new Gauge({
    name: 'skillreg_response_cache_bytes',
    help: 'Bytes held by the response cache (a quarter of SKILLREG_CACHE_MB)',
    registers,
    collect() {
      this.set(cache.stats().bytes);
    },
  });
  new Gauge({
    name: 'skillreg_response_cache_entries',
    help: 'Answers held by the response cache',
    registers,
    collect() {
      this.set(cache.stats().entries);
    },
  });

  // Callback style: this runs for every answer, and nearly all of them return at the first test.
  app.addHook(
    'onSend',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => {
      const spec = request.responseCacheSpec;
      const status = reply.statusCode;
      if (spec !== null && (status === 200 || status === 304)) {
        const url = request.raw.url;
        const route = request.routeOptions.url;
        const body =
          typeof payload === 'string'
            ? bufferBody(payload).value
            : Buffer.isBuffer(payload)
              ? payload
              : undefined;
        if (url !== undefined && route !== undefined && (body !== undefined || status === 304)) {
          cache.store(url, route, spec, reply.getHeaders(), status === 200 ? body : undefined);
        }
      }
      done(null, payload);
    },
  );
  // Fastify answers 503 to requests that arrive while it closes; let them reach it.
  app.addHook('preClose', (done) => {
    cache.disable();
    done();
  });
}

export default fp(responseCachePlugin, {
  name: 'response-cache',
  dependencies: ['metrics'],
});
