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

/**
 * The console's address of a skill page, or of one of its files (`/ui/skills/<name>/files/<path>`);
 * without a version it follows latest.
 */
export function skillHref(
  scope: Scope,
  name: string,
  at: { version?: string | null; file?: string | null } = {},
): string {
  const params = new URLSearchParams(scopeQuery(scope));
  if (at.version) params.set('version', at.version);
  const query = params.toString();
  const file = at.file ? `/files/${at.file.split('/').map(encodeURIComponent).join('/')}` : '';
  return `/ui/skills/${encodeURIComponent(name)}${file}${query ? `?${query}` : ''}`;
}

/** Where writes about a skill go: its own namespace (in a view, the layer it resolved from). */
export function writePrefix(namespace: string | undefined): string {
  return namespace && namespace !== 'default' ? `/namespaces/${encodeURIComponent(namespace)}` : '';
}
