import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../domain/app-errors.js';
import { coversNamespace, DEFAULT_SCOPE, type Scope } from '../domain/scope.js';
import type { Registry } from '../services/registry.js';
import type { AuthorizeOptions } from './plugins/auth.js';
import { namespaceName, requestNamespace, withoutNul } from './schemas.js';

/**
 * Where a read route plugin is mounted (app.ts mounts each once per prefix): at the root (the
 * `default` namespace), under /namespaces/{namespace}/ or under /views/{view}/.
 */
export type ReadMount = 'root' | 'namespace' | 'view';

export const MOUNT_PREFIXES: Record<ReadMount, string> = {
  root: '',
  namespace: '/namespaces/:namespace',
  view: '/views/:view',
};

export const viewName = withoutNul(z.string().max(200)).superRefine((name, context) => {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name) || name.length > 64) {
    context.addIssue({
      code: 'custom',
      message: `view '${name.slice(0, 80)}' is not a valid view name: use 1-64 lowercase letters, digits and single hyphens, not at either end (like skill names), e.g. data-agents`,
    });
  }
});

/** The path parameters a mount adds to every route under it. */
export function mountParams(mount: ReadMount) {
  if (mount === 'namespace') {
    return z.object({ namespace: namespaceName.describe('Namespace; `default` is the unprefixed API') });
  }
  if (mount === 'view') return z.object({ view: viewName.describe('View (GET /views lists them)') });
  return z.object({});
}

/** Route schema fields that depend on the mount: the prefix's parameters and a distinct operationId. */
export function mounted(mount: ReadMount, operationId: string) {
  const suffix = mount === 'namespace' ? 'InNamespace' : mount === 'view' ? 'InView' : '';
  return { operationId: `${operationId}${suffix}` };
}

/**
 * What the auth hook reads to limit a namespace-bound token: the namespace of the path, or `default`;
 * under a view, the view's layers, which useScope checks once it has read them.
 */
export function readAccess(mount: ReadMount): AuthorizeOptions {
  return mount === 'view' ? { anyNamespace: true } : { namespace: requestNamespace };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request reads: set by the mount's scope hook before the handler runs. */
    scope: Scope;
  }
}

/**
 * Sets `request.scope` for every route of a plugin mounted at `mount`: an unknown namespace or view
 * is a 404 naming those that exist. A token limited to namespaces may read a view (with
 * SKILLREG_READ_AUTH=true) only when it covers every layer of it.
 */
export function useScope(app: FastifyInstance, registry: Registry, mount: ReadMount): void {
  if (mount === 'root') {
    // The root reads `default`: set without a promise, on the hottest path.
    app.addHook('preHandler', (request, _reply, done) => {
      request.scope = DEFAULT_SCOPE;
      done();
    });
    return;
  }
  app.addHook('preHandler', async (request: FastifyRequest) => {
    request.scope = await scopeOf(registry, mount, request);
    const limited = request.principal?.namespaces;
    if (request.scope.kind === 'view' && limited && app.config.readAuth) {
      const outside = request.scope.layers.filter((layer) => !coversNamespace(limited, layer));
      if (outside.length > 0) {
        throw new AppError(
          403,
          'Forbidden',
          `view '${request.scope.view}' reads the namespaces ${outside.map((layer) => `'${layer}'`).join(', ')}, which this token may not read; it may read only ${limited.map((pattern) => `'${pattern}'`).join(', ')}`,
          { view: request.scope.view, namespaces: limited, outside },
        );
      }
    }
  });
}

function scopeOf(
  registry: Registry,
  mount: Exclude<ReadMount, 'root'>,
  request: FastifyRequest,
): Promise<Scope> {
  const params = request.params as { namespace?: string; view?: string };
  return mount === 'namespace'
    ? registry.scopes.namespace(params.namespace!)
    : registry.scopes.view(params.view!);
}

/** The problem responses of a route under `mount`: an unknown namespace or view adds a 404. */
export function mountProblems(mount: ReadMount, ...statuses: number[]): number[] {
  return mount === 'root' || statuses.includes(404) ? statuses : [...statuses, 404];
}

/**
 * The namespaces the request's token may read, when reads need a token and the token is limited to
 * namespaces; undefined when it may read every namespace. A publish's shadowing findings name skills
 * there only, so a write never tells a limited token about skills it could not read.
 */
export function readableNamespaces(request: FastifyRequest): readonly string[] | undefined {
  return request.server.config.readAuth ? request.principal?.namespaces : undefined;
}
