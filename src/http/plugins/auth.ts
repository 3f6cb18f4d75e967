import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../domain/app-errors.js';
import { coversNamespace, DEFAULT_NAMESPACE } from '../../domain/scope.js';
import type { TokenService } from '../../services/administration.js';
import {
  grants,
  hashSecret,
  type Principal,
  type Scope,
  tokenNameOf,
} from '../../storage/tokens-repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A hook that lets the request through only with a token granting `scope`. Attach it as a route's
     * `preHandler`; it is moved to `onRequest` so the check runs before the body is read (an anonymous
     * caller gets its 401 without the server buffering an upload, and before any 400 about the body).
     */
    authorize(scope: Scope, options?: AuthorizeOptions): preHandlerHookHandler;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthorizeOptions {
  /**
   * The namespace the request acts in, read from its (not yet validated) params and query. A token
   * limited to namespaces is refused elsewhere. Default: `default`, except for admin routes, which
   * (without this) need a token that is not limited to namespaces at all.
   */
  namespace?: (request: FastifyRequest) => string;
  /** The request is about no one namespace (GET /namespaces): any token with the scope may make it. */
  anyNamespace?: boolean;
  /**
   * The challenge a 401 carries: `bearer` (default), or `basic` for git, which sends credentials (the
   * token as the password) only after a 401 asking for Basic.
   */
  challenge?: 'bearer' | 'basic';
}

const ANONYMOUS_READER: Principal = { actor: 'anonymous', scopes: ['read'] };
const WWW_AUTHENTICATE = 'Bearer realm="skill-registry"';
const BASIC_CHALLENGE = 'Basic realm="skill-registry", charset="UTF-8"';

class AuthError extends AppError {
  constructor(status: 401 | 403, detail: string, extensions: Record<string, unknown> = {}) {
    super(status, status === 401 ? 'Unauthorized' : 'Forbidden', detail, extensions);
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;

/**
 * The secret an Authorization header presents: a bearer token, or HTTP Basic's password (its user name
 * when the password is empty), which is how git and other HTTP clients send a token.
 */
function presentedSecret(header: string): string | undefined {
  const bearer = BEARER.exec(header);
  if (bearer) return bearer[1];
  const basic = BASIC.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  return password || user || undefined;
}

/** The Authorization header a request presents, if any (an empty one presents nothing). */
function presentedCredential(request: FastifyRequest): string | undefined {
  return request.headers.authorization || undefined;
}

const credentialDigests = new WeakMap<FastifyRequest, string>();

/**
 * The SHA-256 (hex) of the credential a request presents: of the bearer secret, as a token's hash is
 * stored, or of the whole header when it is no bearer token; undefined without one. Computed once per
 * request for all that needs it: the admin token's comparison, the auth-failure limit's key (which so
 * counts a secret however its header is spelt) and the logs' fingerprint.
 */
export function credentialDigest(request: FastifyRequest): string | undefined {
  let digest = credentialDigests.get(request);
  if (digest === undefined) {
    const header = presentedCredential(request);
    if (header === undefined) return undefined;
    digest = hashSecret(presentedSecret(header) ?? header);
    credentialDigests.set(request, digest);
  }
  return digest;
}

/**
 * A short name that logs may carry for the credential a request presents (it must present one): the
 * first 8 hex digits of its digest, so a token's matches the start of its stored hash. It tells one
 * credential from another; it cannot give the secret back.
 */
export function credentialFingerprint(request: FastifyRequest): string {
  return credentialDigest(request)!.slice(0, 8);
}

/** Requests whose credential the auth plugin refused (401): what the auth-failure limit counts. */
const refusedCredentials = new WeakSet<FastifyRequest>();
export const credentialWasRefused = (request: FastifyRequest): boolean => refusedCredentials.has(request);

type Refusal = 'malformed' | 'unknown' | 'revoked' | 'expired' | 'scope' | 'namespace';

/**
 * One warn line per refused credential, on the request's logger (so with its request id): the token's
 * name when the secret is a token's, else the credential's fingerprint; never the secret itself.
 */
function logRefusal(
  request: FastifyRequest,
  reason: Refusal,
  who: { token: string } | { credential: string },
  extra: Record<string, unknown> = {},
): void {
  request.log.warn(
    {
      event: 'auth.refused',
      reason,
      ...who,
      ...extra,
      method: request.method,
      // The path only: a query string may carry anything.
      url: request.url.split('?')[0],
    },
    'credentials refused',
  );
}

async function authPlugin(app: FastifyInstance, options: { tokens: Pick<TokenService, 'authenticate'> }) {
  const { tokens } = options;
  app.decorateRequest('principal', null);
  /** The admin token's digest, hashed once rather than on every request that presents a secret. */
  const adminDigest = app.config.adminToken ? Buffer.from(hashSecret(app.config.adminToken)) : undefined;

  const authorizeHooks = new WeakSet<object>();
  app.addHook('onRoute', (route) => {
    const toList = <T>(value: T | T[] | undefined): T[] =>
      value === undefined ? [] : Array.isArray(value) ? value : [value];
    const preHandlers = toList(route.preHandler);
    const checks = preHandlers.filter((hook) => authorizeHooks.has(hook));
    if (checks.length === 0) return;
    route.preHandler = preHandlers.filter((hook) => !authorizeHooks.has(hook));
    route.onRequest = [...toList(route.onRequest), ...checks] as typeof route.onRequest;
  });

  async function identify(request: FastifyRequest): Promise<Principal | null> {
    const header = presentedCredential(request);
    if (!header) return null;
    if (presentedSecret(header) === undefined) {
      refusedCredentials.add(request);
      logRefusal(request, 'malformed', { credential: credentialFingerprint(request) });
      throw new AuthError(
        401,
        "the Authorization header must be 'Bearer <token>' (or HTTP Basic with the token as the password)",
        { reason: 'malformed' },
      );
    }
    // Hashes of equal length compared in constant time: how long the check takes says nothing.
    if (adminDigest && timingSafeEqual(Buffer.from(credentialDigest(request)!), adminDigest)) {
      return { actor: 'admin-token', scopes: ['admin'] };
    }
    // The secret's hash, as tokens are stored: computed once per request (credentialDigest).
    const result = await tokens.authenticate(credentialDigest(request)!);
    if ('refused' in result) {
      const reasons = {
        unknown:
          'the bearer token is not known to this registry; check SKILLREG_TOKEN or create one with POST /tokens',
        revoked: 'the bearer token was revoked; ask an admin for a new one',
        expired: 'the bearer token has expired; ask an admin for a new one',
      } as const;
      refusedCredentials.add(request);
      logRefusal(
        request,
        result.refused,
        'name' in result ? { token: result.name } : { credential: credentialFingerprint(request) },
      );
      throw new AuthError(401, reasons[result.refused], { reason: result.refused });
    }
    return result;
  }

  /** A 403 unless the principal may act in the request's namespace (see AuthorizeOptions). */
  function checkNamespace(
    principal: Principal,
    scope: Scope,
    request: FastifyRequest,
    options: AuthorizeOptions,
  ): void {
    const allowed = principal.namespaces;
    if (allowed === undefined || options.anyNamespace) return;
    const listed = allowed.map((pattern) => `'${pattern}'`).join(', ');
    const token = tokenNameOf(principal.actor);
    if (!options.namespace && scope === 'admin') {
      logRefusal(request, 'namespace', { token }, { requiredScope: scope, namespaces: allowed });
      throw new AuthError(
        403,
        `this request needs a token that is not limited to namespaces; the token may act only in ${listed}`,
        { requiredScope: scope, namespaces: allowed },
      );
    }
    const namespace = options.namespace?.(request) ?? DEFAULT_NAMESPACE;
    if (coversNamespace(allowed, namespace)) return;
    logRefusal(request, 'namespace', { token }, { requiredScope: scope, namespace });
    const verb = scope === 'read' ? 'read' : 'write';
    throw new AuthError(
      403,
      `this token may ${verb} only in the namespaces ${listed}, not in '${namespace}'. Use a token for '${namespace}', or ask an admin to add it to this token's namespaces`,
      { requiredScope: scope, namespace, namespaces: allowed },
    );
  }

  app.decorate('authorize', (scope: Scope, options: AuthorizeOptions = {}): preHandlerHookHandler => {
    const publicRead = scope === 'read' && !app.config.readAuth;
    const challenge = options.challenge === 'basic' ? BASIC_CHALLENGE : WWW_AUTHENTICATE;
    const check = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.header('www-authenticate', challenge);
      const principal = await identify(request);
      if (!principal) {
        if (scope === 'read' && !app.config.readAuth) {
          request.principal = ANONYMOUS_READER;
          reply.removeHeader('www-authenticate');
          return;
        }
        throw new AuthError(
          401,
          options.challenge === 'basic'
            ? `this repository needs a token with scope '${scope}': give git the token as the password (a credential helper), or set http.extraHeader 'Authorization: Bearer <token>'`
            : `this request needs a bearer token with scope '${scope}': send 'Authorization: Bearer <token>'`,
          { reason: 'missing', requiredScope: scope },
        );
      }
      reply.removeHeader('www-authenticate');
      if (!grants(principal.scopes, scope)) {
        logRefusal(
          request,
          'scope',
          { token: tokenNameOf(principal.actor) },
          { requiredScope: scope, scopes: principal.scopes },
        );
        throw new AuthError(
          403,
          `this request needs scope '${scope}'; the token has ${principal.scopes.map((s) => `'${s}'`).join(', ')}. Ask an admin for a token with scope '${scope}'`,
          { requiredScope: scope, scopes: principal.scopes },
        );
      }
      // Public reads are not limited: anyone may make them without the token.
      if (!publicRead) checkNamespace(principal, scope, request, options);
      request.principal = principal;
    };
    // Callback style with a synchronous answer for the commonest request, an anonymous public read:
    // an async hook would cost a promise on every read.
    const hook = function authorizeRequest(
      request: FastifyRequest,
      reply: FastifyReply,
      done: (error?: Error) => void,
    ) {
      if (publicRead && request.headers.authorization === undefined) {
        request.principal = ANONYMOUS_READER;
        done();
        return;
      }
      check(request, reply).then(() => done(), done);
    };
    authorizeHooks.add(hook);
    return hook;
  });
}

export default fp(authPlugin, { name: 'auth' });
