import { z } from 'zod';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import { namespaceName, withoutNul } from '../wire/index.js';

/**
 * Shared request schemas (parameters and queries); they are also what /openapi.json shows. The
 * documents the routes answer with, and the request bodies, are in src/wire, shared with every face.
 */

/** Written with the bodies that use them too (src/wire/text.ts). */
export { namespaceName, withoutNul };

export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const nameParam = z.object({
  name: withoutNul(z.string().min(1).max(64)).describe('Skill name (lowercase letters, digits, hyphens)'),
});

export const selectorQuery = z.object({
  version: withoutNul(z.string().max(256)).optional().describe('Exact version; responses are then immutable'),
  tag: withoutNul(z.string().max(64))
    .optional()
    .describe('Dist-tag such as latest, stable, beta (default latest)'),
});

/** The path parameter of everything under /namespaces/{namespace}/. */
export const namespaceParam = z.object({
  namespace: namespaceName.describe('Namespace (skill-name rules); `default` is the unprefixed API'),
});

/**
 * How a route plugin is mounted: at the root (`?namespace=` selects where a write goes, default
 * `default`) or under /namespaces/{namespace}/ (the path does).
 */
export type NamespaceMount = 'root' | 'prefix';

/** The namespace a request acts in, as the auth hook reads it before validation. */
export function requestNamespace(request: { params: unknown; query: unknown }): string {
  const fromPath = (request.params as { namespace?: unknown } | undefined)?.namespace;
  if (typeof fromPath === 'string') return fromPath;
  const fromQuery = (request.query as { namespace?: unknown } | undefined)?.namespace;
  return typeof fromQuery === 'string' ? fromQuery : DEFAULT_NAMESPACE;
}
