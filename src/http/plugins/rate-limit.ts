import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../errors.js';
import { problemSchema } from '../problem.js';

/**
 * Rate limits, counted per process in memory (@fastify/rate-limit's LRU store): with N replicas a
 * client may get up to N times the configured figures; a shared limit would need a Redis store.
 *
 * - writes (POST /skills, tag moves, yanks, POST and DELETE /tokens): per token, or per address for a
 *   write route that lets an anonymous caller through (none today). The check runs in `onRequest` right
 *   after the route's authorize hook, so it is keyed by the authenticated token and still refuses before
 *   an upload is read. Refused credentials never reach it: they are counted by the next limit.
 * - auth-failures: 401 answers to requests that carried an Authorization header, per address. Past the
 *   limit, every request from that address that carries credentials gets 429 before its token is even
 *   looked up, until the window ends. Requests without credentials (public reads) are not affected.
 * - reads (GET routes, POST /mcp): off by default; per token or address when set. /livez, /readyz and
 *   /metrics are never limited.
 *
 * Answers carry the IETF draft headers RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds),
 * and a 429 adds Retry-After; the 429 is a problem document naming the limit and when to retry.
 */

type LimitName = 'writes' | 'reads' | 'auth-failures';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** POST routes that only read (JSON-RPC over POST). */
const READ_ONLY_POSTS = new Set(['/mcp']);
/** Probes and scrapes: a load balancer or Prometheus must never be refused. */
const NEVER_LIMITED = new Set(['/livez', '/readyz', '/metrics']);
/** Addresses remembered as blocked for too many refused credentials; bounds the memory an attack costs. */
const MAX_BLOCKED_ADDRESSES = 10_000;

const VARIABLES: Record<LimitName, string> = {
  writes: 'SKILLREG_RATE_LIMIT_WRITES',
  reads: 'SKILLREG_RATE_LIMIT_READS',
  'auth-failures': 'SKILLREG_RATE_LIMIT_AUTH_FAILURES',
};

export class RateLimitError extends AppError {
  constructor(limit: LimitName, max: number, windowSeconds: number, retryAfter: number) {
    const what =
      limit === 'auth-failures'
        ? `too many refused credentials from this address (at most ${max} per ${windowSeconds} s); requests carrying an Authorization header are refused until the window ends`
        : `too many ${limit} (at most ${max} per ${windowSeconds} s for this ${limit === 'writes' ? 'token' : 'token or address'})`;
    super(
      429,
      'Too Many Requests',
      `${what}; retry in ${retryAfter} s (Retry-After). The operator sets this limit with ${VARIABLES[limit]}`,
      { limit, max, windowSeconds, retryAfter },
    );
    this.name = 'RateLimitError';
  }
}

/** Who a request counts against: its token once authenticated, else its address. */
export function rateLimitKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.tokenId) return `token:${principal.tokenId}`;
  if (principal && principal.actor !== 'anonymous') return principal.actor;
  return `address:${request.ip}`;
}

function classify(method: string | string[], url: string): 'write' | 'read' | undefined {
  if (NEVER_LIMITED.has(url)) return undefined;
  const methods = Array.isArray(method) ? method : [method];
  if (methods.some((item) => WRITE_METHODS.has(item.toUpperCase())) && !READ_ONLY_POSTS.has(url)) {
    return 'write';
  }
  return 'read';
}

function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  reply.header('ratelimit-limit', limit);
  reply.header('ratelimit-remaining', remaining);
  reply.header('ratelimit-reset', resetSeconds);
}

async function rateLimitPlugin(app: FastifyInstance) {
  const { writes, reads, authFailures, windowSeconds } = app.config.rateLimits;
  const timeWindow = windowSeconds * 1000;

  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    timeWindow,
    keyGenerator: rateLimitKey,
  });

  const limiter = (name: 'writes' | 'reads', max: number): onRequestAsyncHookHandler | undefined => {
    if (max === 0) return undefined;
    const hook = app.rateLimit({
      max,
      timeWindow,
      keyGenerator: rateLimitKey,
      errorResponseBuilder: (_request, context) =>
        new RateLimitError(name, context.max, windowSeconds, Math.max(1, Math.ceil(context.ttl / 1000))),
    });
    return hook as unknown as onRequestAsyncHookHandler;
  };
  const hooks = { write: limiter('writes', writes), read: limiter('reads', reads) };

  // Registered after the auth plugin (see `dependencies`), so its onRoute hook has already moved the
  // route's authorize check into onRequest: appending here puts the limit right after authentication.
  app.addHook('onRoute', (route) => {
    const kind = classify(route.method, route.url);
    const hook = kind && hooks[kind];
    if (!hook) return;
    const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [...existing, hook] as typeof route.onRequest;
    // Documented in OpenAPI; a copy, since route plugins may share one response map between routes.
    const responses = route.schema?.response as Record<string, unknown> | undefined;
    if (route.schema && responses && !(429 in responses)) {
      route.schema = {
        ...route.schema,
        response: {
          ...responses,
          429: problemSchema.describe(
            `Rate limit exceeded (${kind === 'write' ? VARIABLES.writes : VARIABLES.reads}); see Retry-After`,
          ),
        },
      };
    }
  });

  if (authFailures > 0) {
    const countFailure = app.createRateLimit({
      max: authFailures,
      timeWindow,
      keyGenerator: (request) => `address:${request.ip}`,
    });
    /** Address -> epoch milliseconds from which it may present credentials again. */
    const blocked = new Map<string, number>();

    const block = (address: string, until: number) => {
      if (blocked.size >= MAX_BLOCKED_ADDRESSES) {
        const now = Date.now();
        for (const [key, end] of blocked) if (end <= now) blocked.delete(key);
        if (blocked.size >= MAX_BLOCKED_ADDRESSES) blocked.delete(blocked.keys().next().value!);
      }
      blocked.delete(address);
      blocked.set(address, until);
    };

    // Root hooks run before every route's own onRequest hooks, so a blocked address is refused
    // before its token is looked up.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.headers.authorization === undefined || blocked.size === 0) return done();
      const until = blocked.get(request.ip);
      if (until === undefined) return done();
      const now = Date.now();
      if (until <= now) {
        blocked.delete(request.ip);
        return done();
      }
      const retryAfter = Math.max(1, Math.ceil((until - now) / 1000));
      setHeaders(reply, authFailures, 0, retryAfter);
      reply.header('retry-after', retryAfter);
      done(new RateLimitError('auth-failures', authFailures, windowSeconds, retryAfter));
    });

    // Callback style: every answer passes here, and all but refused credentials leave at once.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode !== 401 || request.headers.authorization === undefined) {
        done(null, payload);
        return;
      }
      countFailure(request).then(
        (result) => {
          if (!result.isAllowed && result.remaining === 0) block(request.ip, Date.now() + result.ttl);
          done(null, payload);
        },
        (error) => done(error, payload),
      );
    });
  }
}

export default fp(rateLimitPlugin, {
  name: 'rate-limit',
  dependencies: ['registry-context', 'auth', 'errors'],
});
