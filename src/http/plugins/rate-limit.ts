import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../domain/app-errors.js';
import { problemSchema } from '../problem.js';
import { credentialDigest, credentialFingerprint, credentialWasRefused } from './auth.js';

/**
 * Rate limits, counted per process in memory (@fastify/rate-limit's LRU store): with N replicas a
 * client may get up to N times the configured figures; a shared limit would need a Redis store.
 *
 * - writes (POST /skills, tag moves, yanks, POST and DELETE /tokens): per token, or per address for a
 *   write route that lets an anonymous caller through (none today). The check runs in `onRequest` right
 *   after the route's authorize hook, so it is keyed by the authenticated token and still refuses before
 *   an upload is read. Refused credentials never reach it: they are counted by the next limit.
 * - auth-failures: credentials the auth plugin refused (401), per credential (the hash of its secret,
 *   auth.ts credentialDigest). Past the limit, requests presenting that same credential get 429 before it is
 *   looked up, until the window ends. Keyed by what failed, not by address: behind a proxy or NAT every
 *   client shares one address, and a stale CI token retried in a loop must not lock out the valid
 *   tokens beside it. No per-address ceiling: one that refused before the lookup would lock those
 *   tokens out, and one that refused only failing credentials would stop nothing (a right guess still
 *   passes). Guessing is hopeless instead: created tokens are 256 random bits (the README asks the same
 *   of SKILLREG_ADMIN_TOKEN). Missing credentials, valid ones refused a scope or namespace (403), and
 *   other 401s are never counted.
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
/** Credentials remembered as blocked for being refused too often; bounds the memory an attack costs. */
const MAX_BLOCKED_CREDENTIALS = 10_000;

const VARIABLES: Record<LimitName, string> = {
  writes: 'SKILLREG_RATE_LIMIT_WRITES',
  reads: 'SKILLREG_RATE_LIMIT_READS',
  'auth-failures': 'SKILLREG_RATE_LIMIT_AUTH_FAILURES',
};

export class RateLimitError extends AppError {
  constructor(limit: LimitName, max: number, windowSeconds: number, retryAfter: number) {
    const what =
      limit === 'auth-failures'
        ? `this credential was refused too often (at most ${max} times per ${windowSeconds} s); requests presenting it are refused until the window ends, other credentials are not. Check the token (SKILLREG_TOKEN) or ask an admin for a new one`
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
    // Counted and blocked under the credential's digest: the secret itself is never kept.
    const countFailure = app.createRateLimit({
      max: authFailures,
      timeWindow,
      keyGenerator: (request) => `credential:${credentialDigest(request)}`,
    });
    /** Credential digest -> epoch milliseconds from which it may be presented again. */
    const blocked = new Map<string, number>();

    const block = (key: string, until: number) => {
      if (blocked.size >= MAX_BLOCKED_CREDENTIALS) {
        const now = Date.now();
        for (const [entry, end] of blocked) if (end <= now) blocked.delete(entry);
        if (blocked.size >= MAX_BLOCKED_CREDENTIALS) blocked.delete(blocked.keys().next().value!);
      }
      blocked.delete(key);
      blocked.set(key, until);
    };

    // Root hooks run before every route's own onRequest hooks, so a blocked credential is refused
    // before it is looked up.
    app.addHook('onRequest', (request, reply, done) => {
      if (blocked.size === 0) return done();
      const key = credentialDigest(request);
      if (key === undefined) return done();
      const until = blocked.get(key);
      if (until === undefined) return done();
      const now = Date.now();
      if (until <= now) {
        blocked.delete(key);
        return done();
      }
      const retryAfter = Math.max(1, Math.ceil((until - now) / 1000));
      setHeaders(reply, authFailures, 0, retryAfter);
      reply.header('retry-after', retryAfter);
      done(new RateLimitError('auth-failures', authFailures, windowSeconds, retryAfter));
    });

    // Callback style: every answer passes here, and all but refused credentials leave at once.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode !== 401 || !credentialWasRefused(request)) {
        done(null, payload);
        return;
      }
      countFailure(request).then(
        (result) => {
          if (!result.isAllowed && result.remaining === 0) {
            block(credentialDigest(request)!, Date.now() + result.ttl);
            request.log.warn(
              {
                event: 'auth.limited',
                credential: credentialFingerprint(request),
                max: authFailures,
                windowSeconds,
              },
              'credential refused too often: answered 429 until the window ends',
            );
          }
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
