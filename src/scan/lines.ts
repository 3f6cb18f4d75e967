import { foldConfusables, joinSplitWords, stripInvisible } from './rules/confusables.js';

/**
 * A text file as the rules read it: each line normalised (invisible characters removed, NFKC,
 * look-alike letters folded to ASCII, escapes and entities decoded, words a shell splits joined) so
 * disguised spellings match, with where it sits: in a fenced code
 * block of Markdown (and whether the text around that block warns against what it shows), or in text
 * a rendered page hides (HTML comments, Markdown comment links, elements styled invisible).
 */
export interface Line {
  /** 1-based. */
  number: number;
  text: string;
  /** In a ``` or ~~~ block of a Markdown file. */
  fenced: boolean;
  /** The block, or the lines just before it, say not to do this: security teaching, not advice. */
  warned: boolean;
  /** Hidden when the Markdown or HTML is rendered. */
  hidden: boolean;
}

const WARNING =
  /\b(?:never|do not|don't|dont|avoid|dangerous|unsafe|insecure|warning|malicious|attack(?:er|s)?|vulnerab\w*|bad practice|anti-?pattern|example of (?:an? )?(?:attack|malicious)|phishing)\b|⚠|❌|🚫/i;

/** Longest line the rules look at; the rest of a minified line is not read. */
const MAX_LINE = 8_192;

export function decodeEscapes(text: string): string {
  if (!text.includes('\\') && !text.includes('%') && !text.includes('&#')) return text;
  let decoded = text
    .replace(/\\u\{([0-9a-fA-F]{1,6})\}/g, (_, hex: string) => safeCodePoint(Number.parseInt(hex, 16)))
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => safeCodePoint(Number.parseInt(hex, 16)))
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/%([0-9a-fA-F]{2})/g, (match, hex: string) => {
      const code = Number.parseInt(hex, 16);
      // Only what URL-encoding hides in commands: printable ASCII.
      return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : match;
    });
  if (decoded.includes('&#')) {
    decoded = decoded.replace(/&#x([0-9a-fA-F]{1,6});?|&#(\d{1,7});?/g, (_, hex?: string, dec?: string) =>
      safeCodePoint(hex ? Number.parseInt(hex, 16) : Number.parseInt(dec!, 10)),
    );
  }
  // Octal escapes ($'\162\155' in shell, "\162" in Python) when a line is made of them, not a stray one.
  if ((decoded.match(/\\[0-7]{3}/g)?.length ?? 0) >= 3) {
    decoded = decoded.replace(/\\([0-7]{3})/g, (_, octal: string) =>
      String.fromCharCode(Number.parseInt(octal, 8)),
    );
  }
  return decoded;
}

function safeCodePoint(code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

const ASCII = /^[\x20-\x7e\t]*$/;

function clean(text: string): string {
  return foldConfusables(stripInvisible(text).normalize('NFKC'));
}

export function normalise(text: string): string {
  const line = text.slice(0, MAX_LINE);
  // Plain ASCII has nothing to fold or hide (most lines of most files).
  const plain = ASCII.test(line) ? line : clean(line);
  const decoded = decodeEscapes(plain);
  return joinSplitWords(decoded === plain || ASCII.test(decoded) ? decoded : clean(decoded));
}

export function isMarkdown(path: string): boolean {
  return /\.(?:md|markdown|mdx|txt)$/i.test(path) || !/\.[a-z0-9]+$/i.test(path.split('/').pop() ?? '');
}

export function linesOf(path: string, text: string): Line[] {
  const raw = text.split(/\r?\n/);
  const markdown = isMarkdown(path) || /\.html?$/i.test(path);
  const lines: Line[] = [];
  let fence: string | undefined;
  let fenceWarned = false;
  let inComment = false;
  let hiddenElement = false;
  for (let at = 0; at < raw.length; at++) {
    const original = raw[at]!;
    const text = normalise(original);
    let hidden = inComment || hiddenElement;
    // Most lines hold none of the characters fences, comments and hidden elements start with.
    if (markdown && (fence !== undefined || inComment || hiddenElement || /[`~<[-]/.test(text))) {
      const opening = /^\s*(```+|~~~+)/.exec(text);
      if (fence === undefined && opening) {
        fence = opening[1]![0]!;
        const before = raw
          .slice(Math.max(0, at - 4), at)
          .map(normalise)
          .join(' ');
        fenceWarned = WARNING.test(before) || WARNING.test(text);
        lines.push({ number: at + 1, text, fenced: true, warned: fenceWarned, hidden });
        continue;
      }
      if (fence !== undefined) {
        if (text.trimStart().startsWith(fence.repeat(3))) fence = undefined;
        else if (WARNING.test(text) && /^\s*(?:#|\/\/|--|<!--|REM\b)/i.test(text)) fenceWarned = true;
        lines.push({ number: at + 1, text, fenced: true, warned: fenceWarned, hidden: false });
        continue;
      }
      // HTML comments (possibly over several lines) and `[//]: # (...)` comment links are never shown.
      if (text.includes('<!--')) hidden = true;
      if (/^\s*\[(?:\/\/|comment|_)\]:\s*#/i.test(text)) hidden = true;
      if (
        /<(?:div|span|p|section)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|hidden\b)/i.test(
          text,
        )
      ) {
        hidden = true;
        hiddenElement = !/<\/(?:div|span|p|section)>/i.test(text);
      } else if (hiddenElement && /<\/(?:div|span|p|section)>/i.test(text)) {
        hiddenElement = false;
      }
      const opens = text.lastIndexOf('<!--');
      const closes = text.lastIndexOf('-->');
      if (opens >= 0 && closes < opens) inComment = true;
      else if (inComment && closes >= 0) inComment = false;
    }
    lines.push({ number: at + 1, text, fenced: false, warned: false, hidden });
  }
  return lines;
}

/**
 * The normalised lines as one text, with where each starts: a rule scans it once and learns which
 * lines match, rather than testing every line (most lines match nothing).
 */
const GLOBAL = new WeakMap<RegExp, RegExp>();

export class LineText {
  readonly joined: string;
  private readonly starts: number[];

  constructor(readonly lines: readonly Line[]) {
    this.joined = lines.map((line) => line.text).join('\n');
    this.starts = [];
    let offset = 0;
    for (const line of lines) {
      this.starts.push(offset);
      offset += line.text.length + 1;
    }
  }

  /**
   * 0-based indexes of the lines `pattern` matches somewhere in (at most `limit`). With a `gate` (a
   * cheaper pattern every match of `pattern` also matches), the text is scanned with the gate and only
   * the lines it finds are tested with `pattern`.
   */
  matching(pattern: RegExp, limit = 10_000, gate?: RegExp): number[] {
    if (gate) return this.matching(gate, limit).filter((at) => pattern.test(this.lines[at]!.text));
    let global = GLOBAL.get(pattern);
    if (!global) {
      global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
      GLOBAL.set(pattern, global);
    }
    global.lastIndex = 0;
    const found: number[] = [];
    while (found.length < limit) {
      const match = global.exec(this.joined);
      if (match === null) break;
      const at = this.lineOf(match.index);
      found.push(at);
      // One hit a line is enough: go on from the next line.
      global.lastIndex = at + 1 < this.starts.length ? this.starts[at + 1]! : this.joined.length;
    }
    return found;
  }

  private lineOf(index: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}
