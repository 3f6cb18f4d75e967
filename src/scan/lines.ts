import { withoutInvisible } from './unicode.js';

/**
 * A text file as the rules read it: each line normalised (NFKC, invisible characters removed, common
 * escapes decoded) so look-alike and escaped spellings match, with where it sits: in a fenced code
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
  if (!text.includes('\\') && !text.includes('%')) return text;
  return text
    .replace(/\\u\{([0-9a-fA-F]{1,6})\}/g, (_, hex: string) => safeCodePoint(Number.parseInt(hex, 16)))
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => safeCodePoint(Number.parseInt(hex, 16)))
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/%([0-9a-fA-F]{2})/g, (match, hex: string) => {
      const code = Number.parseInt(hex, 16);
      // Only what URL-encoding hides in commands: printable ASCII.
      return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : match;
    });
}

function safeCodePoint(code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

const ASCII = /^[\x20-\x7e\t]*$/;

export function normalise(text: string): string {
  const line = text.slice(0, MAX_LINE);
  // Plain ASCII has nothing to normalise or hide (most lines of most files).
  if (ASCII.test(line)) return decodeEscapes(line);
  return decodeEscapes(withoutInvisible(line).normalize('NFKC'));
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
