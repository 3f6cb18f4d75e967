/**
 * Splitting SKILL.md into YAML frontmatter and Markdown body, safely.
 *
 * gray-matter finds the `---` block; the YAML inside is parsed by the `yaml` package with the
 * YAML 1.2 core schema (dates and `yes`/`no` stay strings, no custom types) and a bounded alias
 * count. gray-matter ships an engine that `eval`s `---js` blocks: every engine but YAML is
 * replaced by one that refuses, and the language is checked before gray-matter runs at all.
 */
import matter from 'gray-matter';
import { type Document, isMap, isScalar, LineCounter, parseDocument, visit, type YAMLError } from 'yaml';
import { BundleError, type BundleIssue } from './types.js';

const SKILL_MD = 'SKILL.md';

/** The frontmatter and body of a SKILL.md. */
export interface SplitSkillMd {
  /** Whether the file opens with a `---` frontmatter block at all. */
  hasFrontmatter: boolean;
  /** The frontmatter mapping; empty when there is no frontmatter or it holds no keys. */
  data: Record<string, unknown>;
  /** The Markdown after the frontmatter, LF line endings, no BOM. */
  body: string;
  /**
   * The text a scalar was written as, by key path (`['metadata', 'version']` -> `'1.0'` where the
   * parsed value is the number 1). Lets callers turn numbers back into the string the author typed.
   */
  sourceText(path: readonly string[]): string | undefined;
  warnings: BundleIssue[];
}

/** Bounds the work YAML aliases can cause (billion laughs): total expanded alias uses. */
export const MAX_ALIAS_COUNT = 100;
/**
 * The lenient pass re-parses the block, so it only runs on frontmatter of a hand-written size and
 * for a few rounds (a repair can uncover an error the first one hid).
 */
const MAX_REPAIRABLE_CHARS = 64 * 1024;
const MAX_REPAIR_ROUNDS = 3;
/** Repeated warnings of one kind beyond this are summarised in one line. */
const MAX_WARNINGS_PER_KIND = 10;
/** How many distinct YAML errors are reported; later ones are usually knock-on effects. */
const MAX_REPORTED_YAML_ERRORS = 5;

const YAML_LANGUAGES = new Set(['', 'yaml', 'yml']);

/**
 * Decodes SKILL.md as strict UTF-8. A lenient decode would silently turn bad bytes into U+FFFD and
 * store a corrupted skill, so invalid bytes are refused with their position.
 */
export function decodeUtf8(bytes: Uint8Array, path = SKILL_MD): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8Offset(bytes);
    const line = lineOfByte(bytes, offset);
    throw refusal(
      `${path} is not valid UTF-8 (first invalid byte at offset ${offset}, line ${line}); re-save it as UTF-8`,
      path,
      'SKILL.md is not valid UTF-8',
    );
  }
}

export interface SplitOptions {
  /** Largest frontmatter block (UTF-8 bytes between the --- lines) that is parsed; unbounded when absent. */
  maxFrontmatterBytes?: number;
}

/**
 * Splits decoded SKILL.md text; throws BundleError(422) when the frontmatter cannot be read and
 * BundleError(413) when it is larger than `maxFrontmatterBytes`, before any YAML is parsed.
 */
export function splitFrontmatter(rawText: string, options: SplitOptions = {}): SplitSkillMd {
  const warnings: BundleIssue[] = [];
  const text = stripLeadingBlankLines(normalizeText(rawText), warnings);
  if (!opensFrontmatter(text)) {
    return { hasFrontmatter: false, data: {}, body: text, sourceText: () => undefined, warnings };
  }
  refuseNonYamlLanguage(text);
  refuseUnclosedFrontmatter(text);
  if (options.maxFrontmatterBytes !== undefined) refuseLargeFrontmatter(text, options.maxFrontmatterBytes);

  let parsed: ParsedYaml | undefined;
  const file = matter(
    text,
    safeMatterOptions((source) => (parsed = parseYaml(source))),
  );
  const data = parsed ? toMapping(parsed.value) : {};
  warnings.push(...(parsed?.warnings ?? []));
  return {
    hasFrontmatter: true,
    data,
    body: dropRestOfClosingLine(file.content),
    sourceText: (path) => (parsed ? scalarSource(parsed.doc, path) : undefined),
    warnings,
  };
}

/** BOM removed, CRLF turned into LF: Windows editors produce both and agents ignore them. */
function normalizeText(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
}

function stripLeadingBlankLines(text: string, warnings: BundleIssue[]): string {
  const match = /^(?:[ \t]*\n)+(?=---)/.exec(text);
  if (!match) return text;
  warnings.push({
    path: SKILL_MD,
    detail:
      'SKILL.md has blank lines before the opening --- of its frontmatter; they were ignored, but agents expect --- on the very first line: remove them',
  });
  return text.slice(match[0].length);
}

/** Same rule as gray-matter: `---` at the start, not followed by a fourth `-` (a Markdown rule). */
function opensFrontmatter(text: string): boolean {
  return text.startsWith('---') && text.charAt(3) !== '-';
}

function firstLineAfterDelimiter(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text.slice(3) : text.slice(3, end)).trim();
}

function refuseNonYamlLanguage(text: string): void {
  const language = firstLineAfterDelimiter(text);
  if (YAML_LANGUAGES.has(language.toLowerCase())) return;
  throw languageRefusal(language);
}

function languageRefusal(language: string): BundleError {
  return refusal(
    `frontmatter language '${language}' is not allowed; write YAML frontmatter between --- lines (the first line must be exactly ---)`,
    SKILL_MD,
    'Frontmatter language not allowed',
  );
}

function refuseUnclosedFrontmatter(text: string): void {
  const firstLineEnd = text.indexOf('\n');
  if (firstLineEnd !== -1 && text.indexOf('\n---', firstLineEnd) !== -1) return;
  throw refusal(
    'SKILL.md starts a frontmatter block with --- but never closes it; add a line with --- after the last frontmatter key',
    SKILL_MD,
  );
}

/** The block gray-matter hands the YAML engine: from the end of the opening line to the closing `---`. */
function refuseLargeFrontmatter(text: string, limit: number): void {
  const start = text.indexOf('\n');
  const end = text.indexOf('\n---', start);
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes, so short blocks need no counting.
  if ((end - start) * 3 <= limit) return;
  const size = Buffer.byteLength(text.slice(start, end), 'utf8');
  if (size <= limit) return;
  const detail =
    `SKILL.md frontmatter is ${size} bytes; the limit is ${limit} bytes (${describeSize(limit)}), ` +
    'configurable on the server with SKILLREG_MAX_FRONTMATTER_BYTES: keep the frontmatter to name, ' +
    'description and a few short keys, and move long material into the body or references/ files';
  throw new BundleError(413, 'Frontmatter too large', detail, [{ path: SKILL_MD, detail }]);
}

function describeSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/**
 * Options for gray-matter. Passing an object always also disables gray-matter's global cache,
 * which otherwise keys on content and would hand back shared, mutable results.
 */
function safeMatterOptions(parseYamlBlock: (source: string) => ParsedYaml) {
  const refuse = (language: string) => ({
    parse: (): object => {
      throw languageRefusal(language);
    },
  });
  return {
    excerpt: false,
    language: 'yaml',
    engines: {
      yaml: { parse: (source: string): object => parseYamlBlock(source).value as object },
      javascript: refuse('javascript'),
      js: refuse('js'),
      coffee: refuse('coffee'),
      coffeescript: refuse('coffeescript'),
      cson: refuse('cson'),
      json: refuse('json'),
      toml: refuse('toml'),
    },
  };
}

/** gray-matter leaves whatever followed `---` on the closing line (usually nothing or spaces). */
function dropRestOfClosingLine(content: string): string {
  return content.replace(/^[ \t]*(?:\n|$)/, '');
}

function toMapping(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  const what = Array.isArray(value) ? 'a list' : `a single ${typeof value} value`;
  throw refusal(
    `SKILL.md frontmatter must be a YAML mapping of 'key: value' lines (name, description, ...); it is ${what}`,
    SKILL_MD,
  );
}

interface ParsedYaml {
  doc: Document;
  value: unknown;
  warnings: BundleIssue[];
}

/**
 * `uniqueKeys` is off because the yaml package checks it in quadratic time (a minute for a 1 MiB
 * frontmatter of short keys); duplicates are found in one pass by `duplicateKeys` instead.
 */
const YAML_OPTIONS = {
  version: '1.2',
  schema: 'core',
  merge: false,
  prettyErrors: true,
  uniqueKeys: false,
  // Problems are reported in the response; the yaml package would also print some of them with
  // process.emitWarning (e.g. a mapping used as a key), letting any uploader write to the server's stderr.
  logLevel: 'error',
} as const;

/**
 * Parses the frontmatter block. Files that are invalid YAML only because of unquoted values with a
 * `: ` in them (or starting with ` or @) are repaired by quoting those values, with a warning;
 * duplicate keys are read last-wins with a warning, as PyYAML-based agents do. Anything else is refused.
 */
function parseYaml(source: string): ParsedYaml {
  const warnings: BundleIssue[] = [];
  const lineCounter = new LineCounter();
  const original = parseDocument(source, { ...YAML_OPTIONS, lineCounter });
  let doc = original;
  let repairedCounter = lineCounter;
  if (doc.errors.length > 0 && source.length <= MAX_REPAIRABLE_CHARS) {
    let repaired = source;
    for (let round = 0; round < MAX_REPAIR_ROUNDS && doc.errors.length > 0; round++) {
      const repair = quoteOffendingValues(repaired, doc.errors);
      if (!repair) break;
      repaired = repair.source;
      warnings.push(...repair.warnings);
      repairedCounter = new LineCounter();
      doc = parseDocument(repaired, { ...YAML_OPTIONS, lineCounter: repairedCounter });
    }
  }
  if (doc.errors.length > 0) throw yamlRefusal(original.errors);
  const duplicates = duplicateKeys(doc, repairedCounter);
  refuseConflictingNames(duplicates);
  warnings.push(...capped(duplicates.map(duplicateKeyWarning), 'repeated keys'));
  warnings.push(...capped(doc.warnings.map(yamlWarning), 'YAML warnings'));
  return { doc, value: toJs(doc), warnings };
}

function toJs(doc: Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof ReferenceError) {
      throw refusal(
        `SKILL.md frontmatter uses YAML aliases (*name) that expand beyond ${MAX_ALIAS_COUNT} copies; write the values out instead of aliasing them`,
        SKILL_MD,
      );
    }
    throw error;
  }
}

/**
 * gray-matter hands the engine the block starting with the newline that ends the opening `---`,
 * so YAML's line numbers already are SKILL.md's line numbers.
 */
function fileLine(frontmatterLine: number): number {
  return frontmatterLine;
}

function yamlRefusal(errors: readonly YAMLError[]): BundleError {
  const seenLines = new Set<number>();
  const issues: BundleIssue[] = [];
  for (const error of errors) {
    const line = error.linePos?.[0].line ?? 0;
    if (seenLines.has(line) || issues.length >= MAX_REPORTED_YAML_ERRORS) continue;
    seenLines.add(line);
    issues.push({ path: SKILL_MD, detail: describeYamlError(error) });
  }
  return new BundleError(422, 'Invalid frontmatter YAML', issues[0]!.detail, issues);
}

function describeYamlError(error: YAMLError): string {
  const position = error.linePos?.[0];
  const where = position ? ` at line ${fileLine(position.line)}, column ${position.col}` : '';
  return `SKILL.md frontmatter is not valid YAML${where}: ${yamlMessage(error)}; ${yamlHint(error.code)}`;
}

/** The yaml message without its own position and source excerpt. */
function yamlMessage(error: YAMLError): string {
  const firstLine = error.message.split('\n')[0] ?? error.message;
  return firstLine.replace(/ at line \d+, column \d+:?$/, '');
}

function yamlHint(code: string): string {
  switch (code) {
    case 'TAB_AS_INDENT':
      return 'indent with spaces, not tabs';
    case 'MISSING_CHAR':
      return 'close the quote or bracket that was opened';
    case 'BAD_INDENT':
    case 'MISSING_INDENT':
      return 'indent nested keys consistently with spaces';
    default:
      return "put values containing ': ', '#' or starting with a special character in double quotes";
  }
}

interface DuplicateKey {
  key: string;
  line: number;
  topLevel: boolean;
  /** Every value the key was given, in order. */
  values: unknown[];
}

/** Keys repeated within one mapping, found in one pass over the document. */
function duplicateKeys(doc: Document, lineCounter: LineCounter): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Map<string, DuplicateKey>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        const value = isScalar(pair.value) ? pair.value.value : String(pair.value);
        const earlier = seen.get(key);
        if (earlier) {
          earlier.values.push(value);
          if (earlier.values.length === 2) found.push(earlier);
          continue;
        }
        const line = lineCounter.linePos(pair.key.range?.[0] ?? 0).line;
        seen.set(key, { key, line, topLevel: map === doc.contents, values: [value] });
      }
    },
  });
  return found;
}

function duplicateKeyWarning(duplicate: DuplicateKey): BundleIssue {
  return {
    path: SKILL_MD,
    detail: `SKILL.md frontmatter repeats the key '${duplicate.key}' (first at line ${fileLine(duplicate.line)}) in the same mapping; the last value is used: remove the duplicate`,
  };
}

/** Two different top-level names make the skill's identity ambiguous, so that is not last-wins. */
function refuseConflictingNames(duplicates: readonly DuplicateKey[]): void {
  const names = duplicates.find((duplicate) => duplicate.topLevel && duplicate.key === 'name');
  if (!names) return;
  const distinct = [...new Set(names.values.map((value) => String(value)))];
  if (distinct.length <= 1) return;
  throw refusal(
    `SKILL.md frontmatter has 'name' ${names.values.length} times with different values (${distinct.map((n) => `'${n}'`).join(', ')}); keep exactly one`,
    `${SKILL_MD}#name`,
  );
}

function yamlWarning(warning: YAMLError): BundleIssue {
  const position = warning.linePos?.[0];
  const where = position ? ` at line ${fileLine(position.line)}` : '';
  return {
    path: SKILL_MD,
    detail: `SKILL.md frontmatter${where}: ${yamlMessage(warning)}; the value was read as plain text`,
  };
}

function scalarSource(doc: Document, path: readonly string[]): string | undefined {
  let node: unknown = doc.contents;
  for (const key of path) node = lastValueOf(node, key);
  return isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
}

/** Duplicate keys read last-wins (as toJS does), so the source text must come from the last one. */
function lastValueOf(node: unknown, key: string): unknown {
  if (!isMap(node)) return undefined;
  for (let i = node.items.length - 1; i >= 0; i--) {
    const pair = node.items[i]!;
    if (isScalar(pair.key) && String(pair.key.value) === key) return pair.value;
  }
  return undefined;
}

// --- Lenient repair of unquoted values -------------------------------------------------------

/** Errors that an unquoted value with `: ` or a reserved first character produces. */
const REPAIRABLE_CODES = new Set([
  'BLOCK_AS_IMPLICIT_KEY',
  'MULTILINE_IMPLICIT_KEY',
  'BAD_SCALAR_START',
  'UNEXPECTED_TOKEN',
]);

/** `key: value` where the value is plain text: not quoted, not a block, anchor, alias, tag or comment. */
const PLAIN_KEY_VALUE = /^( *)([A-Za-z_][\w.-]*):[ \t]+([^\s"'|>&*!#%].*)$/;

interface Repair {
  source: string;
  warnings: BundleIssue[];
}

/** Quotes the plain values behind every repairable error; undefined when any error is not one. */
function quoteOffendingValues(source: string, errors: readonly YAMLError[]): Repair | undefined {
  const lines = source.split('\n');
  const owners = new Map<number, YAMLError>();
  for (const error of errors) {
    const errorLine = error.linePos?.[0].line;
    if (!REPAIRABLE_CODES.has(error.code) || errorLine === undefined) return undefined;
    const owner = owningKeyLine(lines, errorLine - 1);
    if (owner === undefined) return undefined;
    if (!owners.has(owner)) owners.set(owner, error);
  }
  const warnings: BundleIssue[] = [];
  let covered = -1;
  const replacements: { index: number; count: number; line: string }[] = [];
  for (const [index, error] of [...owners].sort((a, b) => a[0] - b[0])) {
    if (index <= covered) continue;
    const { line, key, count } = quotedValueLine(lines, index);
    replacements.push({ index, count, line });
    covered = index + count - 1;
    warnings.push(repairWarning(key, fileLine(index + 1), error));
  }
  for (const { index, count, line } of replacements.reverse()) lines.splice(index, count, line);
  return { source: lines.join('\n'), warnings: capped(warnings, 'unquoted values') };
}

/** The `key: value` line at `index` (plus its continuation lines) rewritten with the value quoted. */
function quotedValueLine(lines: string[], index: number): { line: string; key: string; count: number } {
  const match = PLAIN_KEY_VALUE.exec(lines[index]!)!;
  const [, indent = '', key = ''] = match;
  const continuation = continuationLines(lines, index, indent.length);
  const value = [match[3]!, ...continuation]
    .map((line) => stripComment(line).trim())
    .filter((part) => part !== '')
    .join(' ');
  return { line: `${indent}${key}: ${JSON.stringify(value)}`, key, count: 1 + continuation.length };
}

/** The `key: value` line an error belongs to: the error's own line or the one its text continues. */
function owningKeyLine(lines: string[], index: number): number | undefined {
  const line = lines[index];
  if (line === undefined) return undefined;
  if (PLAIN_KEY_VALUE.test(line)) return index;
  const errorIndent = indentOf(line);
  for (let i = index - 1; i >= 0; i--) {
    const candidate = lines[i]!;
    if (candidate.trim() === '') return undefined;
    if (indentOf(candidate) < errorIndent) return PLAIN_KEY_VALUE.test(candidate) ? i : undefined;
  }
  return undefined;
}

/** Following lines indented deeper than the key: YAML folds them into the same plain value. */
function continuationLines(lines: string[], keyIndex: number, keyIndent: number): string[] {
  const result: string[] = [];
  for (let i = keyIndex + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || indentOf(line) <= keyIndent) break;
    result.push(line);
  }
  return result;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** In a plain YAML value ` #` starts a comment, so it was never part of the text. */
function stripComment(line: string): string {
  return line.replace(/(^|[ \t])#.*$/, '');
}

function repairWarning(key: string, line: number, error: YAMLError): BundleIssue {
  const reason =
    error.code === 'BAD_SCALAR_START'
      ? 'starts with a character YAML reserves'
      : error.code === 'UNEXPECTED_TOKEN'
        ? 'starts like a YAML list or mapping but goes on as text'
        : "contains ': ', which YAML reads as a nested key";
  return {
    path: `${SKILL_MD}#${key}`,
    detail: `SKILL.md line ${line}: the value of '${key}' ${reason}; it was read as plain text, but strict YAML parsers (and some agents) refuse it: put the value in double quotes`,
  };
}

// --- Small helpers -----------------------------------------------------------------------------

function refusal(detail: string, path: string, title = 'Invalid SKILL.md'): BundleError {
  return new BundleError(422, title, detail, [{ path, detail }]);
}

/** The first warnings of a kind, and one line saying how many more there were. */
function capped(warnings: BundleIssue[], kind: string): BundleIssue[] {
  if (warnings.length <= MAX_WARNINGS_PER_KIND) return warnings;
  const rest = warnings.length - MAX_WARNINGS_PER_KIND;
  return [
    ...warnings.slice(0, MAX_WARNINGS_PER_KIND),
    { path: SKILL_MD, detail: `SKILL.md frontmatter has ${rest} more ${kind} like the ones above` },
  ];
}

function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  const lenient = new TextEncoder().encode(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes));
  const limit = Math.min(lenient.length, bytes.length);
  for (let i = 0; i < limit; i++) if (lenient[i] !== bytes[i]) return i;
  return limit;
}

function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}
