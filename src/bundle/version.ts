import semver from 'semver';
import { BundleError, type BundleIssue } from './types.js';

export interface VersionChoice {
  version: string;
  /** Where the version came from, for the publish answer and the audit log. */
  source: 'query' | 'metadata' | 'next-patch';
  warnings: BundleIssue[];
}

/**
 * Picks the version of a new publish: `?version=` first, then frontmatter `metadata.version`,
 * else the next patch after the highest version ever published (versions are never reused).
 */
export function chooseVersion(input: {
  requested?: string;
  metadataVersion?: string;
  existing: readonly string[];
}): VersionChoice {
  if (input.requested !== undefined) {
    const version = semver.valid(input.requested);
    if (!version) {
      throw new BundleError(400, 'Bad Request', `version '${input.requested}' is not a semver version`, [
        {
          path: '?version',
          detail: `version '${input.requested}' is not a semver version such as 1.2.3 or 2.0.0-beta.1`,
        },
      ]);
    }
    return { version, source: 'query', warnings: [] };
  }
  if (input.metadataVersion !== undefined) return fromMetadata(input.metadataVersion);
  const highest = semver.rsort([...input.existing])[0];
  const version = highest ? semver.inc(highest, 'patch') : '1.0.0';
  return { version: version ?? '1.0.0', source: 'next-patch', warnings: [] };
}

function fromMetadata(raw: string): VersionChoice {
  const exact = semver.valid(raw);
  if (exact) return { version: exact, source: 'metadata', warnings: [] };
  // "1.0" or "v2" are common in real files and their meaning is clear.
  const coerced = semver.coerce(raw, { includePrerelease: true })?.version;
  if (coerced && /^v?\d+(\.\d+){0,2}([-+].*)?$/.test(raw.trim())) {
    return {
      version: coerced,
      source: 'metadata',
      warnings: [
        {
          path: 'SKILL.md#metadata.version',
          detail: `metadata.version '${raw}' is not full semver; published as '${coerced}' (write '${coerced}' to silence this)`,
        },
      ],
    };
  }
  throw new BundleError(422, 'Unprocessable Content', `metadata.version '${raw}' is not a semver version`, [
    {
      path: 'SKILL.md#metadata.version',
      detail: `metadata.version '${raw}' is not a semver version; write it as MAJOR.MINOR.PATCH such as 1.2.3, or remove it to let the registry assign the next patch`,
    },
  ]);
}

/** Versions sorted newest first by semver precedence. */
export function sortVersionsDescending(versions: readonly string[]): string[] {
  return semver.rsort([...versions]);
}

/** The version `latest` follows: the highest release, or the highest pre-release when there is no release. */
export function pickLatest(versions: readonly string[]): string | undefined {
  const sorted = sortVersionsDescending(versions);
  return sorted.find((version) => semver.prerelease(version) === null) ?? sorted[0];
}
