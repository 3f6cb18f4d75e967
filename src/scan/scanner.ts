import { binaryFindings } from './binaries.js';
import { isMarkdown, type Line, linesOf } from './lines.js';
import { decodeAndRun, payloadsOf } from './payloads.js';
import { secretFindings } from './secrets.js';
import {
  ANY_COMMAND,
  CREDENTIAL_READ,
  EXFIL_HOST,
  INJECTION,
  lineFindings,
  OUTBOUND,
  RAW_IP_URL,
} from './text-rules.js';
import {
  type Finding,
  SCAN_BUDGET_MS,
  type ScannedFile,
  type ScanResult,
  type Severity,
  severityRank,
  verdictOf,
} from './types.js';
import { hiddenUnicode, preview } from './unicode.js';

/**
 * The publish-time scan of one bundle: every file, every rule family of the contract, findings with
 * file and line, and a verdict. Pure (no I/O) and bounded: text beyond MAX_TEXT_BYTES of a file is
 * not read, encoded payloads are decoded within payloads.ts's limits and scanned once more (not
 * recursively), and the findings kept are capped, so a hostile bundle cannot make a scan slow.
 */

/** Changes whenever a rule changes: stored with every verdict, so a rescan can tell what is stale. */
export const RULES_VERSION = '2026.12.01';

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
}

/** Texts at least this large have their scan time predicted from the slowest large text before them. */
const PREDICTED_TEXT_BYTES = 256 * 1024;

/** Text, or undefined for a binary file (a NUL byte near the start, or not UTF-8). */
function textOf(bytes: Uint8Array): string | undefined {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, MAX_TEXT_BYTES));
  } catch {
    // A cut in the middle of a character at the limit is not binary.
    if (bytes.length > MAX_TEXT_BYTES)
      return new TextDecoder('utf-8').decode(bytes.subarray(0, MAX_TEXT_BYTES));
    return undefined;
  }
}

interface FileSignals {
  path: string;
  credential?: Line;
  outbound?: Line;
  exfilHost?: Line;
}

export async function scanBundle(
  files: readonly ScannedFile[],
  options: ScanOptions = {},
): Promise<ScanResult> {
  const findings: Finding[] = [];
  const signals: FileSignals[] = [];
  const deadline = performance.now() + (options.budgetMs ?? SCAN_BUDGET_MS);
  // The slowest text seen so far, per byte: a file predicted to end past the deadline is not started,
  // so the budget bounds the whole scan rather than the moment the last file starts.
  // Only large texts count: a small file's time is mostly fixed costs, not bytes.
  let msPerTextByte = 0;
  for (const [at, file] of files.entries()) {
    const started = performance.now();
    const text = started > deadline ? undefined : textOf(file.bytes);
    const predicted =
      text !== undefined && text.length >= PREDICTED_TEXT_BYTES ? msPerTextByte * text.length : 0;
    if (started > deadline || started + predicted > deadline) {
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
    findings.push(...textFindings(file.path, text, lines));
    const payloads = ENCODED_RUN.test(text) ? payloadsOf(lines) : [];
    findings.push(...decodeAndRun(file.path, lines, payloads));
    const fileSignals = signalsOf(file.path, lines, text);
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
          findings.push({
            ...finding,
            rule: finding.rule,
            detail: `in ${payload.encoding}-encoded text: ${finding.detail}`,
          });
        }
      }
      const inner = signalsOf(file.path, decoded);
      fileSignals.credential ??= inner.credential;
      fileSignals.outbound ??= inner.outbound;
      fileSignals.exfilHost ??= inner.exfilHost;
    }
    signals.push(fileSignals);
    if (text.length <= MAX_SECRET_BYTES) findings.push(...(await secretFindings(file.path, text)));
    if (text.length >= PREDICTED_TEXT_BYTES) {
      msPerTextByte = Math.max(msPerTextByte, (performance.now() - started) / text.length);
    }
  }
  findings.push(...exfiltration(signals));
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
/** Any character the hidden-Unicode rules look at, anywhere in the file. */
const INVISIBLE = /[\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]|[\u{e0000}-\u{e007f}]/u;

/** Hidden characters, command rules and hidden instructions of one text file. */
function textFindings(path: string, text: string, lines: readonly Line[]): Finding[] {
  const findings: Finding[] = [];
  const raw = INVISIBLE.test(text) ? text.split(/\r?\n/) : [];
  for (let at = 0; at < raw.length; at++) {
    const hidden = hiddenUnicode(path, at + 1, raw[at]!);
    findings.push(...hidden.findings);
    if (hidden.tagText && INJECTION.test(hidden.tagText)) {
      findings.push({
        rule: 'hidden-instructions/invisible-text',
        severity: 'critical',
        path,
        line: at + 1,
        detail: `invisible tag characters tell the model: "${preview(hidden.tagText)}". Remove them`,
      });
    }
  }
  // One test of the whole file first: most files name no command any rule looks for.
  const commands = ANY_COMMAND.test(text);
  for (const [at, line] of lines.entries()) {
    if (commands) {
      const before = lines.slice(Math.max(0, at - 2), at).map((one) => one.text);
      findings.push(...lineFindings(path, line, before));
    }
    if (line.hidden && INJECTION.test(line.text)) {
      findings.push({
        rule: 'hidden-instructions/hidden-text',
        severity: 'critical',
        path,
        line: line.number,
        detail: `text a reader does not see (an HTML comment or hidden element) tells the model to set aside its instructions or the user, or to hide what it does: "${preview(line.text)}". Put instructions in visible text, or remove them`,
      });
    }
  }
  return findings;
}

function signalsOf(path: string, lines: readonly Line[], text?: string): FileSignals {
  const signals: FileSignals = { path };
  // In documentation only code counts: prose mentions `.env` and POST requests all the time.
  const prose = isMarkdown(path);
  // Elsewhere, one test of the whole file for each signal first: most files hold none.
  const whole = prose ? undefined : text;
  const credential = whole === undefined || CREDENTIAL_READ.test(whole);
  const raw = whole === undefined || RAW_IP_URL.test(whole);
  const outbound = raw || OUTBOUND.test(whole!);
  const exfil = raw || EXFIL_HOST.test(whole!);
  if (!credential && !outbound && !exfil) return signals;
  for (const line of lines) {
    if (line.fenced && line.warned) continue;
    if (prose && !line.fenced) continue;
    if (credential && !signals.credential && CREDENTIAL_READ.test(line.text)) signals.credential = line;
    if (outbound && !signals.outbound && (OUTBOUND.test(line.text) || RAW_IP_URL.test(line.text))) {
      signals.outbound = line;
    }
    if (exfil && !signals.exfilHost && (EXFIL_HOST.test(line.text) || RAW_IP_URL.test(line.text))) {
      signals.exfilHost = line;
    }
  }
  return signals;
}

/** Reading credentials and sending data out: in one file, or to a receiving host from another file. */
function exfiltration(signals: readonly FileSignals[]): Finding[] {
  const findings: Finding[] = [];
  const reading = signals.filter((one) => one.credential);
  for (const one of reading) {
    const send = one.exfilHost ?? one.outbound;
    if (!send) continue;
    findings.push({
      rule: 'credential-exfiltration/read-and-send',
      severity: 'critical',
      path: one.path,
      line: send.number,
      detail: `reads credentials (line ${one.credential!.number}: \`${preview(one.credential!.text, 60)}\`) and sends data out (\`${preview(send.text, 60)}\`): a credential stealer. A skill must never move secrets off the machine`,
    });
  }
  if (findings.length === 0 && reading.length > 0) {
    const receiver = signals.find((one) => one.exfilHost);
    if (receiver) {
      findings.push({
        rule: 'credential-exfiltration/across-files',
        severity: 'high',
        path: receiver.path,
        line: receiver.exfilHost!.number,
        detail: `sends to a host that only receives data (\`${preview(receiver.exfilHost!.text, 60)}\`) while ${reading[0]!.path} reads credentials (line ${reading[0]!.credential!.number}). Remove both`,
      });
    }
  }
  for (const one of signals) {
    if (one.exfilHost && !one.credential && findings.every((finding) => finding.path !== one.path)) {
      findings.push({
        rule: 'credential-exfiltration/receiving-host',
        severity: 'medium',
        path: one.path,
        line: one.exfilHost.number,
        detail: `sends to a request-capture, paste, tunnel or raw-IP host (\`${preview(one.exfilHost.text, 60)}\`): such hosts are how stolen data leaves. Use the service's own API host`,
      });
    }
  }
  return findings;
}

function dedupe(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((finding) => {
    const key = `${finding.rule}|${finding.path}|${finding.line}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
