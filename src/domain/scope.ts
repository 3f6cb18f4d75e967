/**
 * Namespaces in the process's own bookkeeping. A skill is (namespace, name); in-memory keys, change
 * notifications, load counts and search feedback name it by one string, its skill key: the bare name
 * in `default` (so everything keyed before namespaces existed still means the same skill) and
 * `namespace/name` elsewhere (names hold no `/`, so the key is unambiguous).
 */
export const DEFAULT_NAMESPACE = 'default';

export function skillKey(namespace: string, name: string): string {
  return namespace === DEFAULT_NAMESPACE ? name : `${namespace}/${name}`;
}

export function splitSkillKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: DEFAULT_NAMESPACE, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Namespace names follow the skill-name rules (CONTRACT.md): 1-64 of a-z 0-9 -, no edge or double hyphen. */
const NAMESPACE_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function isValidNamespace(namespace: string): boolean {
  return namespace.length >= 1 && namespace.length <= 64 && NAMESPACE_PATTERN.test(namespace);
}

/** Why `namespace` is no valid namespace name, or undefined when it is one. */
export function namespaceProblem(namespace: string): string | undefined {
  if (isValidNamespace(namespace)) return undefined;
  return `namespace '${namespace.slice(0, 80)}' is not a valid namespace name: use 1-64 lowercase letters, digits and single hyphens, not at either end (like skill names), e.g. data-platform`;
}

/**
 * A token's namespace pattern: an exact namespace name, or a prefix ending in `*` (`data-*` matches
 * `data-eng` and `data-`-anything; a lone `*` matches every namespace).
 */
export function namespacePatternProblem(pattern: string): string | undefined {
  if (pattern === '*') return undefined;
  if (pattern.endsWith('*')) {
    const prefix = pattern.slice(0, -1);
    if (/^[a-z0-9-]{1,63}$/.test(prefix) && !prefix.startsWith('-') && !prefix.includes('--'))
      return undefined;
    return `namespace pattern '${pattern.slice(0, 80)}' is not valid: a trailing '*' must follow the start of a namespace name (lowercase letters, digits, hyphens), e.g. data-*`;
  }
  const problem = namespaceProblem(pattern);
  return problem && `${problem}; or end it in '*' to match every namespace that starts with it`;
}

/** Whether `namespaces` (a token's patterns; undefined or null: every namespace) covers `namespace`. */
export function coversNamespace(patterns: readonly string[] | null | undefined, namespace: string): boolean {
  if (patterns === null || patterns === undefined) return true;
  return patterns.some((pattern) =>
    pattern.endsWith('*') ? namespace.startsWith(pattern.slice(0, -1)) : pattern === namespace,
  );
}

/**
 * What a read is about: one namespace (the unprefixed API is `default`), or a view, an ordered overlay
 * of namespaces where, per skill name, the last layer holding a servable version wins.
 */
export type Scope =
  | { kind: 'namespace'; namespace: string }
  | { kind: 'view'; view: string; layers: readonly string[] };

export const DEFAULT_SCOPE: Scope = { kind: 'namespace', namespace: DEFAULT_NAMESPACE };

/** The namespaces a scope reads, lowest precedence first. */
export function layersOf(scope: Scope): readonly string[] {
  return scope.kind === 'namespace' ? [scope.namespace] : scope.layers;
}

/** One string per scope, for cache keys and ETags (a view's key names its layers too). */
export function scopeKey(scope: Scope): string {
  return scope.kind === 'namespace'
    ? `ns:${scope.namespace}`
    : `view:${scope.view}:${scope.layers.join(',')}`;
}

/** The path prefix of a scope's API: none for `default`. */
export function scopePath(scope: Scope): string {
  if (scope.kind === 'view') return `/views/${scope.view}`;
  return scope.namespace === DEFAULT_NAMESPACE ? '' : `/namespaces/${scope.namespace}`;
}
