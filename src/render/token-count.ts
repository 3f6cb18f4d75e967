import { countO200k } from './o200k.js';

/**
 * Token counts use OpenAI's o200k_base BPE (gpt-tokenizer's vocabulary, held compactly by o200k.ts;
 * pure JS, no network). Claude's tokenizer is not public; o200k is the closest widely used modern
 * vocabulary, so budgets are estimates that err by a few percent rather than the ~25% of a
 * characters/4 rule (bench/tokenizers.ts measures it).
 */

/**
 * BPE merging is quadratic in the length of one unbroken run (64 KB of "a" takes seconds, 1 MiB never
 * finishes), and an uploaded body may hold a base64 image. Text is therefore counted in pieces of about
 * this many characters, cut where o200k's pre-tokenizer splits anyway (see isCleanCut), so that the sum
 * over the pieces is the count of the whole text. A piece grows up to MAX_RUN characters to reach such a
 * point (a description, at most 1,024 characters, always does); only a longer stretch without one is
 * cut elsewhere (after a newline or a space where possible: a cut there costs at most one token).
 */
const MAX_PIECE = 1000;
const MAX_RUN = 2048;

export function countTokens(text: string): number {
  let total = 0;
  for (const piece of pieces(text)) {
    // Skill text may legitimately contain strings such as "<|endoftext|>": countO200k counts them as text.
    total += countO200k(piece);
  }
  return total;
}

function* pieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > MAX_PIECE) {
    let end = cleanCut(text, start + MAX_PIECE / 2, start + MAX_PIECE);
    if (end < 0) end = nextCleanCut(text, start + MAX_PIECE, Math.min(text.length, start + MAX_RUN));
    if (end < 0) {
      end = start + MAX_PIECE;
      const window = text.slice(start, end);
      const newline = window.lastIndexOf('\n');
      const space = window.lastIndexOf(' ');
      const boundary = newline > MAX_PIECE / 2 ? newline : space > MAX_PIECE / 2 ? space : -1;
      if (boundary >= 0) end = start + boundary + 1;
      // Never split a surrogate pair: half a character would count as garbage.
      else if (isLowSurrogate(text.charCodeAt(end))) end -= 1;
    }
    yield text.slice(start, end);
    start = end;
  }
  if (start < text.length) yield text.slice(start);
}

/**
 * Whether cutting `text` before index `at` leaves the token count unchanged: count(text) ===
 * count(text.slice(0, at)) + count(text.slice(at)). o200k splits text into pre-tokens with a regular
 * expression (letters with at most one leading non-letter, 1-3 digits, ` ?` punctuation followed by
 * `[\r\n/]*`, whitespace runs) and merges only inside a pre-token; the expression has no look-behind and
 * its one look-ahead, `\s+(?!\S)`, only looks at whitespace. So a cut is exact where a pre-token always
 * ends and the next starts whatever surrounds them:
 * - after a newline followed by neither whitespace nor `/` (no pre-token continues a newline with
 *   anything else: a punctuation run takes `[\r\n/]*`, a whitespace run ends at its last newline);
 * - before a space that follows a character other than whitespace (no pre-token takes a space after
 *   anything but whitespace: a space only ever starts one).
 * Prompt renderings join their parts at such points, so their counts add up (test/render/prompt-tokens.test.ts
 * checks it over a corpus of real skills).
 */
export function isCleanCut(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return true;
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  if (before === NEWLINE) return after !== SLASH && !isWhitespace(after);
  return after === SPACE && !isWhitespace(before);
}

/** The last clean cut in (from, to], or -1. */
function cleanCut(text: string, from: number, to: number): number {
  let space = -1;
  for (let at = to; at > from; at--) {
    const before = text.charCodeAt(at - 1);
    const after = text.charCodeAt(at);
    // A cut after a newline keeps pieces aligned with lines; a cut before a space is the next best.
    if (before === NEWLINE) {
      if (after !== SLASH && !isWhitespace(after)) return at;
    } else if (space < 0 && after === SPACE && !isWhitespace(before)) {
      space = at;
    }
  }
  return space;
}

/** The first clean cut in [from, to] (the end of the text is one), or -1. */
function nextCleanCut(text: string, from: number, to: number): number {
  for (let at = from; at <= to; at++) if (isCleanCut(text, at)) return at;
  return -1;
}

const NEWLINE = 10;
const SPACE = 32;
const SLASH = 47;

/** `\s` of a JavaScript regular expression (what o200k's expression means by whitespace). */
function isWhitespace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return false;
  return (
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The layer-1 cost of a skill: what one catalogue entry adds to a system prompt. */
export function countCatalogueEntryTokens(name: string, description: string): number {
  return countTokens(`<skill>\n<name>${name}</name>\n<description>${description}</description>\n</skill>\n`);
}
