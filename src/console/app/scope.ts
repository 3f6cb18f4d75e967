import type { Scope } from './api';

/** The scope a console page reads, from its URL: `?ns=<namespace>` or `?view=<view>`, else the root. */
export function scopeOf(url: URL): Scope {
  const view = url.searchParams.get('view');
  if (view) return { kind: 'view', name: view };
  const ns = url.searchParams.get('ns');
  if (ns && ns !== 'default') return { kind: 'namespace', name: ns };
  return { kind: 'root' };
}

export function scopeQuery(scope: Scope): string {
  if (scope.kind === 'view') return `view=${encodeURIComponent(scope.name)}`;
  if (scope.kind === 'namespace') return `ns=${encodeURIComponent(scope.name)}`;
  return '';
}

export function skillHref(scope: Scope, name: string): string {
  const query = scopeQuery(scope);
  return `/ui/skills/${encodeURIComponent(name)}${query ? `?${query}` : ''}`;
}

/** Where writes about a skill go: its own namespace (in a view, the layer it resolved from). */
export function writePrefix(namespace: string | undefined): string {
  return namespace && namespace !== 'default' ? `/namespaces/${encodeURIComponent(namespace)}` : '';
}
