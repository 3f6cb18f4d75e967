import { binaryFindings } from './binaries.js';
import { type RuleGroup, signalsOf, textFindings } from './file-rules.js';
import { LineText, linesOf } from './lines.js';
import { decodeAndRun, payloadsOf } from './payloads.js';
import { bundleFindings, type FileSignals } from './rules/intent.js';
import { FileView } from './rules/literals.js';
import { secretFindings } from './secrets.js';
import { lineFindings } from './text-rules.js';
import {
  type Finding,
  SCAN_BUDGET_MS,
  type ScannedFile,
  type ScanResult,
  type Severity,
  severityRank,
  verdictOf,
} from './types.js';

/**
 * The publish-time scan of one bundle: every file, every rule family of the contract, findings with
 * file and line, and a verdict. Pure (no I/O) and bounded: text beyond MAX_TEXT_BYTES of a file is
 * not read, encoded payloads are decoded within payloads.ts's limits and scanned once more (not
 * recursively), and the findings kept are capped, so a hostile bundle cannot make a scan slow.
 */

/** Changes whenever a rule changes: stored with every verdict, so a rescan can tell what is stale. */
export const RULES_VERSION = '2026.12.03';

/** Bytes of one text file the rules read. */
export const MAX_TEXT_BYTES = 2 * 1024 * 1024;
/** Bytes of one text file the secret patterns read (secrets sit near the top of config files). */
const MAX_SECRET_BYTES = 512 * 1024;
const MAX_FINDINGS = 200;

export interface ScanOptions {
  /** Findings at or above this severity block (SKILLREG_SCAN_BLOCK_SEVERITY, default high). */
  blockSeverity?: Severity;
  /**
   * Time one scan may take (default SCAN_BUDGET_MS). Files left when it runs out are not scanned, and
   * a `scan/incomplete` finding (high) says so: padding a bundle never lets the rest through unread.
   */
  budgetMs?: number;
  /** Rule groups left out: only for measuring what each costs (bench/publish-trust.ts). */
  skip?: readonly RuleGroup[];
}

/** Texts at least this large have their scan time predicted from the slowest large text before them. */
const PREDICTED_TEXT_BYTES = 256 * 1024;

/** Share of bytes that are printable ASCII or whitespace (text in a single-byte encoding is mostly). */
function printable(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes)
    if ((byte >= 0x20 && byte < 0x7f) || byte === 0x09 || byte === 0x0a || byte === 0x0d) count++;
  return bytes.length === 0 ? 1 : count / bytes.length;
}

/**
 * Text, or undefined for a binary file. UTF-8 first; UTF-16 (with a byte-order mark, or ASCII with a
 * NUL after every byte: how Windows tools save scripts); and a file that is mostly printable but not
 * valid UTF-8 is read as Latin-1, so one stray byte cannot turn a script into "binary" and skip it.
 */
export function textOf(bytes: Uint8Array): string | undefined {
  const head = bytes.subarray(0, 8192);
  const bom =
    head[0] === 0xff && head[1] === 0xfe
      ? 'utf-16le'
      : head[0] === 0xfe && head[1] === 0xff
        ? 'utf-16be'
        : undefined;
  if (bom || utf16Ascii(head)) {
    const encoding = bom ?? (head[1] === 0 ? 'utf-16le' : 'utf-16be');
    return new TextDecoder(encoding).decode(bytes.subarray(0, MAX_TEXT_BYTES * 2));
  }
  if (head.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, MAX_TEXT_BYTES));
  } catch {
    // A cut in the middle of a character at the limit is not binary.
    if (bytes.length > MAX_TEXT_BYTES)
      return new TextDecoder('utf-8').decode(bytes.subarray(0, MAX_TEXT_BYTES));
    return printable(head) >= 0.9
      ? new TextDecoder('latin1').decode(bytes.subarray(0, MAX_TEXT_BYTES))
      : undefined;
  }
}

/** ASCII text saved as UTF-16 without a byte-order mark: every other byte NUL, the rest printable. */
function utf16Ascii(head: Uint8Array): boolean {
  if (head.length < 16 || !head.includes(0)) return false;
  const length = Math.min(head.length, 512) & ~1;
  let zeroOdd = 0;
  let zeroEven = 0;
  let textOdd = 0;
  let textEven = 0;
  for (let at = 0; at < length; at++) {
    const byte = head[at]!;
    const text = (byte >= 0x20 && byte < 0x7f) || byte === 0x09 || byte === 0x0a || byte === 0x0d;
    if (at % 2 === 1) {
      if (byte === 0) zeroOdd++;
      else if (text) textOdd++;
    } else if (byte === 0) zeroEven++;
    else if (text) textEven++;
  }
  const half = length / 2;
  return (
    (zeroOdd > 0.95 * half && textEven > 0.95 * half) || (zeroEven > 0.95 * half && textOdd > 0.95 * half)
  );
}

/**
 * Milliseconds a scan has taken: the lesser of wall-clock time and this process's CPU time. The budget
 * bounds what a bundle costs the registry; on a machine other processes keep busy, the wall clock
 * runs on while the scan waits for a core, which would block good bundles for someone else's load.
 */
function timeSpent(): () => number {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  return () => {
    const wall = performance.now() - wallStart;
    const cpu = process.cpuUsage(cpuStart);
    return Math.min(wall, (cpu.user + cpu.system) / 1000);
  };
}

export async function scanBundle(
  files: readonly ScannedFile[],
  options: ScanOptions = {},
): Promise<ScanResult> {
  const findings: Finding[] = [];
  const signals: FileSignals[] = [];
  const skip = new Set(options.skip ?? []);
  const intent = !skip.has('intent');
  const budget = options.budgetMs ?? SCAN_BUDGET_MS;
  const spent = timeSpent();
  // The slowest text seen so far, per byte: a file predicted to end past the deadline is not started,
  // so the budget bounds the whole scan rather than the moment the last file starts.
  // Only large texts count: a small file's time is mostly fixed costs, not bytes.
  let msPerTextByte = 0;
  for (const [at, file] of files.entries()) {
    const started = spent();
    const text = started > budget ? undefined : textOf(file.bytes);
    const predicted =
      text !== undefined && text.length >= PREDICTED_TEXT_BYTES ? msPerTextByte * text.length : 0;
    if (started > budget || started + predicted > budget) {
      findings.push({
        rule: 'scan/incomplete',
        severity: 'high',
        path: file.path,
        line: 0,
        detail: `the bundle took too long to scan: ${files.length - at} of ${files.length} files (from this one on) were not scanned. Split it into smaller skills or leave large data files out`,
      });
      break;
    }
    if (text === undefined) {
      findings.push(...(await binaryFindings(file.path, file.bytes)));
      continue;
    }
    const lines = linesOf(file.path, text);
    const all = new LineText(lines);
    const view = new FileView(file.path, lines);
    // Bulk data (a large JSON, CSV or YAML file) is not text a person or a model is told to follow:
    // the rules about prose and instructions to the user are left out there, the rest run.
    const bulk =
      text.length >= PREDICTED_TEXT_BYTES && /\.(?:jsonl?|ndjson|csv|tsv|ya?ml|xml)$/i.test(file.path);
    const fileSkip = bulk ? new Set([...skip, 'prerequisites' as const, 'intent' as const]) : skip;
    findings.push(...textFindings(file.path, text, all, view, fileSkip));
    const payloads = ENCODED_RUN.test(text) ? payloadsOf(lines) : [];
    findings.push(...decodeAndRun(file.path, lines, payloads));
    const fileSignals = signalsOf(file.path, all, skip.has('literals') ? undefined : view, intent && !bulk);
    // What an encoded payload says counts where it sits (the line of the encoded text).
    for (const payload of payloads) {
      const decoded = linesOf(`${file.path}#decoded`, payload.text).map((line) => ({
        ...line,
        number: payload.line,
        fenced: false,
        warned: false,
      }));
      for (const line of decoded) {
        for (const finding of lineFindings(file.path, line)) {
          findings.push({ ...finding, detail: `in ${payload.encoding}-encoded text: ${finding.detail}` });
        }
      }
      const inner = signalsOf(file.path, new LineText(decoded), undefined, intent);
      fileSignals.credential ??= inner.credential;
      fileSignals.outbound ??= inner.outbound;
      fileSignals.exfilHost ??= inner.exfilHost;
      fileSignals.concealment ??= inner.concealment;
    }
    signals.push(fileSignals);
    if (text.length <= MAX_SECRET_BYTES) {
      findings.push(...(await secretFindings(file.path, text, !skip.has('provider-secrets'))));
    }
    if (text.length >= PREDICTED_TEXT_BYTES) {
      msPerTextByte = Math.max(msPerTextByte, (spent() - started) / text.length);
    }
  }
  findings.push(
    ...bundleFindings(
      intent
        ? signals
        : signals.map(({ path, credential, outbound, exfilHost }) => ({
            path,
            credential,
            outbound,
            exfilHost,
          })),
      findings,
    ),
  );
  const kept = dedupe(findings)
    .sort(
      (a, b) =>
        severityRank(b.severity) - severityRank(a.severity) ||
        (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
        a.line - b.line,
    )
    .slice(0, MAX_FINDINGS);
  return { verdict: verdictOf(kept, options.blockSeverity), rules: RULES_VERSION, findings: kept };
}

/** Any run long enough for payloads.ts to decode (one test of the whole file before any line). */
// Each alternative starts only where a run starts (the lookbehind), so a long word is tried once.
const ENCODED_RUN =
  /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{80}|(?<![0-9a-fA-F])[0-9a-fA-F]{64}|(?:\\x[0-9a-fA-F]{2}){32}/;
function dedupe(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((finding) => {
    const key = `${finding.rule}|${finding.path}|${finding.line}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
