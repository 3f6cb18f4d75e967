import { createHash } from 'node:crypto';
import { AppError } from '../domain/app-errors.js';
import type { Finding, ScanResult, Severity } from '../scan/index.js';
import { severityRank } from '../scan/types.js';
import { tokenNameOf } from '../storage/tokens-repository.js';

/**
 * Quarantine: the 422 of a publish the scan blocked, what the security log says of it, and the way out.
 * "A way out that stays safe": an admin's release of a quarantined version covers later versions of
 * the same skill whose blocking findings are the same ones: same rule, same file, same matched text.
 * Each finding carries a fingerprint of those three (line numbers move when text is added above, so
 * they are left out). A later version with any blocking finding the release did not see goes to
 * review again.
 */

/** A finding as stored: with the fingerprint of its rule, file and matched text. */
export type StoredFinding = Finding & { fingerprint?: string };

/** How a version with a blocking verdict came to be served, recorded in its scan. */
export interface ReleaseRecord {
  /** `review`: an admin released this version; `rule`: an earlier release covered its findings. */
  by: 'review' | 'rule';
  /** The version whose release decided: this one for `review`, the earlier one for `rule`. */
  version: string;
  /** The admin who released it. */
  actor: string;
  reason: string;
  at: string;
}

export type StoredScan = Omit<ScanResult, 'findings'> & {
  findings: StoredFinding[];
  release?: ReleaseRecord;
};

/**
 * What a finding matched: the text of its line, or for a finding about a whole file its content.
 * A file's lines are split once, however many findings it has.
 */
function matcher(files: readonly { path: string; bytes: Uint8Array }[]): (finding: Finding) => string {
  const byPath = new Map(files.map((file) => [file.path, file.bytes]));
  const linesByPath = new Map<string, string[]>();
  return (finding) => {
    const bytes = byPath.get(finding.path);
    if (!bytes) return finding.detail;
    if (finding.line <= 0) return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    let lines = linesByPath.get(finding.path);
    if (!lines) {
      lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n');
      linesByPath.set(finding.path, lines);
    }
    const line = lines[finding.line - 1];
    return line === undefined ? finding.detail : line.replace(/\s+/g, ' ').trim();
  };
}

/** The scan with a fingerprint on every finding (sha256 of rule, path and matched text). */
export function withFingerprints(
  scan: ScanResult,
  files: readonly { path: string; bytes: Uint8Array }[],
): StoredScan {
  const matchedText = matcher(files);
  return {
    ...scan,
    findings: scan.findings.map((finding) => ({
      ...finding,
      fingerprint: createHash('sha256')
        .update(`${finding.rule}\0${finding.path}\0${matchedText(finding)}`)
        .digest('hex')
        .slice(0, 32),
    })),
  };
}

/** A released version of the skill: its number and its stored scan. */
export interface ReleasedVersion {
  version: string;
  createdAt: Date;
  scan: StoredScan;
}

/**
 * The release covering `scan`, if any: the newest released version whose findings include every
 * finding of `scan` at or above `blockSeverity`. Findings below it never block, so they may differ.
 */
export function coveringRelease(
  scan: StoredScan,
  released: readonly ReleasedVersion[],
  blockSeverity: Severity,
): ReleasedVersion | undefined {
  const blocking = scan.findings.filter(
    (finding) => severityRank(finding.severity) >= severityRank(blockSeverity),
  );
  if (blocking.length === 0 || blocking.some((finding) => !finding.fingerprint)) return undefined;
  const newestFirst = [...released].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  return newestFirst.find((candidate) => {
    if (!candidate.scan.release) return false;
    const seen = new Set(candidate.scan.findings.map((finding) => finding.fingerprint).filter(Boolean));
    return blocking.every((finding) => seen.has(finding.fingerprint!));
  });
}

/** The record a version covered by `release` carries in its scan. */
export function releasedByRule(release: ReleasedVersion, at: Date): ReleaseRecord {
  const decided = release.scan.release!;
  return {
    by: 'rule',
    // Through a version an earlier release covered, back to the version the admin released.
    version: decided.by === 'rule' ? decided.version : release.version,
    actor: decided.actor,
    reason: `the same findings (rule, file and matched text) as version ${release.version}, which ${decided.actor} released${decided.reason ? `: ${decided.reason}` : ''}`,
    at: at.toISOString(),
  };
}

/** What the security log says of a quarantined publish or rescan (never a secret). */
export interface QuarantineLogFields {
  namespace: string;
  skill: string;
  version: string;
  /** The rules that found something, each once. */
  rules: string[];
  findings: number;
  /** The name of the token that made the write: the publisher, or who ran the rescan. */
  token: string;
}

export function quarantineLogFields(
  target: { namespace: string; name: string; version: string },
  scan: ScanResult,
  actor: string,
): QuarantineLogFields {
  return {
    namespace: target.namespace,
    skill: target.name,
    version: target.version,
    rules: [...new Set(scan.findings.map((finding) => finding.rule))],
    findings: scan.findings.length,
    token: tokenNameOf(actor),
  };
}

/** A publish the scan blocked: 422 with the whole scan; the version is stored in quarantine. */
export class QuarantineError extends AppError {
  constructor(
    name: string,
    scan: ScanResult,
    version: string,
    /** For the security log (src/http/plugins/security-log.ts); not part of the answer. */
    readonly logFields?: QuarantineLogFields & { created: boolean },
  ) {
    const worst = scan.findings
      .slice(0, 3)
      .map(
        (finding) =>
          `${finding.path}${finding.line > 0 ? `:${finding.line}` : ''} ${finding.rule} (${finding.severity})`,
      );
    super(
      422,
      'Unprocessable Content',
      `'${name}' ${version} is held in quarantine by the security scan (rules ${scan.rules}), stored for review but never served: ${worst.join('; ')}${scan.findings.length > 3 ? `; and ${scan.findings.length - 3} more` : ''}. Fix every finding at or above the block severity and publish again (skillreg validate shows them offline)`,
      {
        name,
        version,
        quarantine: 'held',
        scan,
        errors: scan.findings.map((finding) => ({
          path: finding.line > 0 ? `${finding.path}:${finding.line}` : finding.path,
          detail: `${finding.rule} (${finding.severity}): ${finding.detail}`,
        })),
      },
    );
  }
}
