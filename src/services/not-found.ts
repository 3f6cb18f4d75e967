import { sortVersionsDescending } from '../bundle/version.js';
import { NotFoundError } from '../domain/app-errors.js';
import { LATEST } from '../storage/records.js';

/**
 * The 404s of every face, each saying what exists instead: the closest names, the versions, the tags.
 * REST answers them as problems, MCP as tool errors, the CLI prints them.
 */

/** Finds names like an unknown one (on the pool or inside the current transaction). */
export interface NameLookup {
  closestNames(name: string, limit: number, namespaces?: readonly string[]): Promise<string[]>;
}

/** `namespaces`: where the name was looked for (default `default`), and where similar ones are sought. */
export async function unknownSkill(
  name: string,
  lookup: NameLookup,
  namespaces?: readonly string[],
): Promise<NotFoundError> {
  const suggestions = await lookup.closestNames(name, 5, namespaces);
  const hint =
    suggestions.length > 0
      ? ` Did you mean: ${suggestions.join(', ')}?`
      : ' List the available skills with GET /skills.';
  return new NotFoundError(`no skill named '${name}'.${hint}`, { name, suggestions });
}

/** A 404 for a version a skill does not have, listing the ones it has (newest first). */
export function unknownVersion(name: string, version: string, versions: readonly string[]): NotFoundError {
  const available = sortVersionsDescending(versions);
  return new NotFoundError(
    `skill '${name}' has no version '${version}'; available versions: ${available.join(', ') || 'none'}`,
    { name, version, availableVersions: available },
  );
}

/** A 404 for a tag a skill does not carry (for `latest`: every version is yanked). */
export function missingTag(name: string, tag: string, tags: readonly string[]): NotFoundError {
  const sorted = [...tags].sort();
  const detail =
    tag === LATEST && sorted.length === 0
      ? `skill '${name}' has no current version: every version is yanked. Read one by exact version (?version=) or publish a new one`
      : `skill '${name}' has no dist-tag '${tag}'; its tags are: ${sorted.join(', ') || 'none'}`;
  return new NotFoundError(detail, { name, tag, availableTags: sorted });
}

/** A 404 for a path a version does not hold, naming (some of) the files it has. */
export function unknownFile(
  record: { name: string; version: string },
  path: string,
  paths: readonly string[],
): NotFoundError {
  return new NotFoundError(
    `skill '${record.name}' version ${record.version} has no file '${path}'; its files are: ${paths.slice(0, 50).join(', ')}${paths.length > 50 ? ', ...' : ''}`,
    { name: record.name, version: record.version, path, files: paths.slice(0, 200) },
  );
}

/** A 404 for a namespace nothing was ever published into, listing the ones that exist. */
export function unknownNamespace(namespace: string, existing: readonly string[]): NotFoundError {
  const shown = existing.slice(0, 50);
  return new NotFoundError(
    `no namespace '${namespace}': nothing was ever published into it. Namespaces: ${shown.join(', ') || 'none'}${existing.length > shown.length ? ', ...' : ''} (GET /namespaces); publish with POST /skills?namespace=${namespace} to create it`,
    { namespace, namespaces: shown },
  );
}
