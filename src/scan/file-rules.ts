import { isMarkdown, type Line, LineText } from './lines.js';
import { CONCEALMENT, concealmentAt } from './rules/concealment.js';
import { DISGUISE_ANY, type Disguise, disguiseOf } from './rules/confusables.js';
import { codeFindings } from './rules/destructive.js';
import type { FileSignals } from './rules/intent.js';
import { FileView } from './rules/literals.js';
import { prerequisiteFindings } from './rules/prerequisites.js';
import {
  CREDENTIAL_GATE,
  CREDENTIAL_READ,
  EXFIL_HOST,
  OUTBOUND,
  PROSE_CREDENTIAL,
  PROSE_SEND,
  RAW_IP_URL,
} from './rules/signals.js';
import { ANY_COMMAND, INJECTION, lineFindings } from './text-rules.js';
import type { Finding } from './types.js';
import { hiddenUnicode, preview } from './unicode.js';

/**
 * The rules that read one text file: hidden characters and disguised words, the command rules line
 * by line, code in other languages, prose prerequisites, instructions in hidden text; and the file's
 * signals (credential reads, sends, concealment) for the bundle-level combination.
 */

/** Rule groups a scan can leave out, to measure what each costs (bench/publish-trust.ts). */
export const RULE_GROUPS = [
  'disguise',
  'literals',
  'code',
  'prerequisites',
  'intent',
  'provider-secrets',
] as const;
export type RuleGroup = (typeof RULE_GROUPS)[number];

/** Scripts and programs: what they say runs, whatever the comments around it say. */
export function isCodePath(path: string): boolean {
  return /\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|py|js|mjs|cjs|ts|rb|pl|php|lua|go)$/i.test(path);
}

function judgedView(skip: ReadonlySet<RuleGroup>, view: FileView): FileView | undefined {
  return skip.has('literals') ? undefined : view;
}

/** Any character the hidden-Unicode rules look at, anywhere in the file. */
const INVISIBLE = /[\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]|[\u{e0000}-\u{e007f}]/u;

/** Hidden characters, disguised words, command rules, code, prerequisites and hidden instructions. */
export function textFindings(
  path: string,
  text: string,
  all: LineText,
  view: FileView,
  skip: ReadonlySet<RuleGroup>,
): Finding[] {
  const lines = all.lines;
  const findings: Finding[] = [];
  const disguises = new Map<number, Disguise>();
  const hiddenChars = INVISIBLE.test(text);
  const disguised = !skip.has('disguise') && DISGUISE_ANY.test(text);
  const raw = hiddenChars || disguised ? text.split(/\r?\n/) : [];
  for (let at = 0; at < raw.length; at++) {
    if (hiddenChars) {
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
    // As much of a line as the rules read (lines.ts reads 8 KiB of each).
    const head = raw[at]!.length > 8_192 ? raw[at]!.slice(0, 8_192) : raw[at]!;
    if (disguised && DISGUISE_ANY.test(head)) {
      const disguise = disguiseOf(head);
      if (disguise.split > 0 || disguise.mixed > 0) disguises.set(at + 1, disguise);
    }
  }
  const judged = judgedView(skip, view);
  const markdown = isMarkdown(path);
  if (!skip.has('code')) {
    if (isCodePath(path)) findings.push(...codeFindings(path, lines, view));
    else if (markdown) {
      const fenced = lines.filter((line) => line.fenced && !line.warned);
      if (fenced.length > 0) findings.push(...codeFindings(path, fenced, new FileView(path, fenced)));
    }
  }
  if (!skip.has('prerequisites')) findings.push(...prerequisiteFindings(path, all, judgedView(skip, view)));
  // Lines other rules flag (not the hidden characters themselves): hiding words there is the point.
  const flagged = new Set(
    findings
      .filter((one) => one.severity !== 'low' && !one.rule.startsWith('hidden-unicode/'))
      .map((one) => one.line),
  );
  // One scan of the whole text first: most lines name no command any rule looks for.
  const commands = new Set(all.matching(ANY_COMMAND));
  const hiddenLines = lines.some((line) => line.hidden);
  let heading: string | undefined;
  for (const [at, line] of lines.entries()) {
    if (markdown && !line.fenced && line.text.startsWith('#') && /^#{1,6}\s/.test(line.text))
      heading = line.text;
    if (!commands.has(at) && !line.hidden && !disguises.has(line.number)) continue;
    const own = commands.has(at)
      ? lineFindings(path, line, {
          before: lines.slice(Math.max(0, at - 2), at).map((one) => one.text),
          heading,
          view: judged,
          at,
        })
      : [];
    findings.push(...own);
    if (hiddenLines && line.hidden && INJECTION.test(line.text)) {
      findings.push({
        rule: 'hidden-instructions/hidden-text',
        severity: 'critical',
        path,
        line: line.number,
        detail: `text a reader does not see (an HTML comment or hidden element) tells the model to set aside its instructions or the user, or to hide what it does: "${preview(line.text)}". Put instructions in visible text, or remove them`,
      });
    }
    const disguise = disguises.get(line.number);
    if (disguise) findings.push(...disguiseFindings(path, line, disguise, own, flagged.has(line.number)));
  }
  return findings;
}

/** Words broken by invisible characters or spelled with look-alikes: worse when they spell a rule's words. */
function disguiseFindings(
  path: string,
  line: Line,
  disguise: Disguise,
  own: readonly Finding[],
  flagged: boolean,
): Finding[] {
  const findings: Finding[] = [];
  const instruction = INJECTION.test(line.text) || concealmentAt(line.text) >= 0;
  if (instruction) {
    findings.push({
      rule: 'hidden-instructions/disguised-text',
      severity: 'critical',
      path,
      line: line.number,
      detail: `an instruction to the model (to set aside its instructions, or to keep something from the user) is spelled with invisible characters or look-alike letters so that a reader or a filter misses it: "${preview(line.text)}". Remove it`,
    });
  }
  const matters =
    instruction ||
    flagged ||
    own.some((one) => one.severity !== 'low') ||
    CREDENTIAL_READ.test(line.text) ||
    OUTBOUND.test(line.text) ||
    EXFIL_HOST.test(line.text);
  const severity = matters ? 'high' : 'medium';
  const why = matters
    ? ', and the words it hides are ones the scanner looks for: hiding them is the point'
    : '';
  if (disguise.split > 0) {
    findings.push({
      rule: 'hidden-unicode/split-word',
      severity,
      path,
      line: line.number,
      detail: `${disguise.split} word(s) broken by invisible characters (zero-width, soft hyphen, joiners)${why}. Remove them`,
    });
  }
  if (disguise.mixed > 0) {
    findings.push({
      rule: 'hidden-unicode/homoglyph',
      severity,
      path,
      line: line.number,
      detail: `${disguise.mixed} word(s) mixing Latin letters with look-alike Cyrillic, Greek or other letters${why}. Write them in one script`,
    });
  }
  return findings;
}

const STASH = /(?:\/tmp|\/var\/tmp|\$TMPDIR|%TEMP%|\$env:TEMP)[/\\][\w.-]{2,}/g;

/** What one file does with credentials, the network and the user's attention. */
export function signalsOf(
  path: string,
  all: LineText,
  view: FileView | undefined,
  intent = true,
): FileSignals {
  const signals: FileSignals = { path };
  const lines = all.lines;
  // In documentation, code blocks count for reads and sends; prose only in the bundle-level combination.
  const prose = isMarkdown(path);
  const inCode = (at: number) => (!prose || lines[at]!.fenced) && !(lines[at]!.fenced && lines[at]!.warned);
  const first = (text: LineText, pattern: RegExp, keep: (at: number) => boolean, gate?: RegExp) => {
    for (const at of text.matching(pattern, 10_000, gate)) if (keep(at)) return at;
    return undefined;
  };
  // Reads and sends count in code: a Markdown file's code blocks (scanned on their own), any other file.
  const codeIndexes = prose ? lines.flatMap((_line, at) => (inCode(at) ? [at] : [])) : undefined;
  const code = codeIndexes ? new LineText(codeIndexes.map((at) => lines[at]!)) : all;
  const original = (at: number) => (codeIndexes ? codeIndexes[at]! : at);
  const meant = (pattern: RegExp) => (at: number) => {
    const index = pattern.exec(code.lines[at]!.text)?.index;
    return index !== undefined && !(view && view.roleAt(original(at), index) === 'data');
  };
  const inCodeAt = (found: number | undefined) => (found === undefined ? undefined : original(found));
  const credential = inCodeAt(first(code, CREDENTIAL_READ, meant(CREDENTIAL_READ), CREDENTIAL_GATE));
  if (credential !== undefined) signals.credential = lines[credential];
  const raw = inCodeAt(first(code, RAW_IP_URL, meant(RAW_IP_URL)));
  const outbound = inCodeAt(first(code, OUTBOUND, meant(OUTBOUND)));
  const exfil = inCodeAt(first(code, EXFIL_HOST, meant(EXFIL_HOST)));
  const send = [outbound, raw].filter((at) => at !== undefined).sort((a, b) => a! - b!)[0];
  if (send !== undefined) signals.outbound = lines[send];
  const host = [exfil, raw].filter((at) => at !== undefined).sort((a, b) => a! - b!)[0];
  if (host !== undefined) signals.exfilHost = lines[host];
  if (!intent) return signals;
  const concealed = first(all, CONCEALMENT, (at) => {
    const line = lines[at]!;
    if (line.fenced && line.warned) return false;
    if (!prose && !/#|\/\/|["'`]|\bREM\b|<#/.test(line.text)) return false;
    const index = concealmentAt(
      line.text,
      lines.slice(Math.max(0, at - 2), at).map((one) => one.text),
    );
    return index >= 0 && !(inCode(at) && view?.roleAt(at, index) === 'data');
  });
  if (concealed !== undefined) signals.concealment = lines[concealed];
  if (prose) {
    const proseCredential = first(all, PROSE_CREDENTIAL, (at) => !lines[at]!.fenced);
    if (proseCredential !== undefined) signals.proseCredential = lines[proseCredential];
    const proseSend = first(all, PROSE_SEND, (at) => !lines[at]!.fenced);
    if (proseSend !== undefined) signals.proseSend = lines[proseSend];
  }
  const stash = new Set<string>();
  if (signals.credential || signals.outbound) {
    for (const at of all.matching(STASH, 64)) {
      if (!inCode(at) || stash.size >= 16) continue;
      for (const match of lines[at]!.text.matchAll(STASH)) stash.add(match[0].replace(/^.*[/\\]/, ''));
    }
  }
  if (stash.size > 0) signals.stash = stash;
  return signals;
}
