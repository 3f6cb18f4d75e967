/**
 * Where a link or image in a skill's markdown points, read as its author meant it: a relative path
 * is a file of the same bundle (as on GitHub or in the agent's own copy of the folder), resolved from
 * the folder of the document holding it. Pure: no DOM, so it is tested on its own.
 */
export type LinkTarget =
  | { kind: 'external'; href: string }
  /** A heading of the same document. */
  | { kind: 'fragment'; fragment: string }
  | { kind: 'file'; path: string; fragment: string }
  /** Inert: `label` is shown beside the link's text, `reason` when pointed at. */
  | { kind: 'inert'; label: string; reason: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** A path inside the bundle, or why it is none; `..` may not climb above the bundle's root. */
function bundlePath(
  path: string,
  baseDir: string,
): { path: string } | { kind: 'inert'; label: string; reason: string } {
  const segments = path.startsWith('/') ? [] : baseDir.split('/').filter(Boolean);
  for (const raw of path.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { kind: 'inert', label: 'broken', reason: 'not a valid path' };
    }
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) {
        return { kind: 'inert', label: 'outside the skill', reason: 'points outside this skill' };
      }
      segments.pop();
    } else {
      segments.push(segment);
    }
  }
  return { path: segments.join('/') };
}

/**
 * Resolves `href` found in the document at `baseDir` (its folder inside the bundle, '' for the root)
 * against the version's `files`. Web and mail links leave; anything else with a scheme (javascript:,
 * data:, file:...) is inert.
 */
export function resolveLink(href: string, baseDir: string, files: ReadonlySet<string>): LinkTarget {
  const value = href.trim();
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    return scheme === 'http' || scheme === 'https' || scheme === 'mailto'
      ? { kind: 'external', href: value }
      : { kind: 'inert', label: 'not followed', reason: `${scheme}: links are not followed` };
  }
  if (value.startsWith('//')) return { kind: 'external', href: value };
  const hash = value.indexOf('#');
  const fragment = hash < 0 ? '' : value.slice(hash + 1);
  const beforeHash = hash < 0 ? value : value.slice(0, hash);
  const path = beforeHash.split('?')[0]!;
  if (path === '') {
    return fragment
      ? { kind: 'fragment', fragment }
      : { kind: 'inert', label: 'broken', reason: 'an empty link' };
  }
  const resolved = bundlePath(path, baseDir);
  if ('reason' in resolved) return resolved;
  if (files.has(resolved.path)) return { kind: 'file', path: resolved.path, fragment };
  const prefix = resolved.path === '' ? '' : `${resolved.path}/`;
  if ([...files].some((file) => file.startsWith(prefix))) {
    return { kind: 'inert', label: 'folder', reason: `${resolved.path || 'the skill root'} is a folder` };
  }
  return { kind: 'inert', label: 'missing', reason: `${resolved.path} is not a file of this version` };
}

/** The folder of a path inside the bundle ('' at the root). */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/**
 * A heading's anchor as GitHub makes it (lower case, punctuation dropped, spaces to hyphens), so the
 * `#usage-notes` links authors already write find their heading. `seen` numbers repeated headings.
 */
export function headingSlug(text: string, seen: Map<string, number>): string {
  const base = text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

/** A percent-encoded part of an address, decoded; as written where it is no valid encoding. */
export function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A fragment as a link carries it, compared with heading anchors. */
export function fragmentAnchor(fragment: string): string {
  return decoded(fragment).toLowerCase();
}
