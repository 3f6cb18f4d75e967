/** What the scanner reports (CONTRACT.md "Trust: scanning, quarantine and provenance"). */

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export type Verdict = 'pass' | 'warn' | 'block';

/** Time one scan may take by default (SKILLREG_SCAN_BUDGET_MS); files left then block as unscanned. */
export const SCAN_BUDGET_MS = 800;

export interface Finding {
  /** The rule's id, e.g. `download-exec/pipe-to-shell`; its family is the part before the slash. */
  rule: string;
  severity: Severity;
  /** The file, relative to the bundle root. */
  path: string;
  /** 1-based; 0 for a finding about the whole file (a binary, an archive, a name). */
  line: number;
  /** What is wrong, in a sentence a publisher can act on. */
  detail: string;
}

export interface ScanResult {
  verdict: Verdict;
  /** The rules version the verdict was reached with (a rescan with newer rules may differ). */
  rules: string;
  findings: Finding[];
}

/** A file as the scanner reads it. */
export interface ScannedFile {
  path: string;
  bytes: Uint8Array;
}

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/** block: a finding at or above `blockAt`; warn: any medium or worse; pass otherwise. */
export function verdictOf(findings: readonly Finding[], blockAt: Severity = 'high'): Verdict {
  let worst = -1;
  for (const finding of findings) worst = Math.max(worst, severityRank(finding.severity));
  if (worst >= severityRank(blockAt)) return 'block';
  if (worst >= severityRank('medium')) return 'warn';
  return 'pass';
}
