import { countTokens as countO200k } from 'gpt-tokenizer';

/**
 * Token counts use OpenAI's o200k_base BPE (gpt-tokenizer, pure JS, no network). Claude's tokenizer
 * is not public; o200k is the closest widely used modern vocabulary, so budgets are estimates that
 * err by a few percent rather than the ~25% of a characters/4 rule (bench/tokenizers.ts measures it).
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE merging is quadratic in the length of one unbroken run (64 KB of "a" takes seconds, 1 MiB never
 * finishes), and an uploaded body may hold a base64 image. Text is therefore counted in pieces of at most
 * this many characters, cut after a newline or a space where possible: a cut costs at most one token.
 */
const MAX_PIECE = 1000;

export function countTokens(text: string): number {
  let total = 0;
  for (const piece of pieces(text)) {
    // Skill text may legitimately contain strings such as "<|endoftext|>"; count them as text.
    total += countO200k(piece, PLAIN_TEXT);
  }
  return total;
}

function* pieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > MAX_PIECE) {
    let end = start + MAX_PIECE;
    const window = text.slice(start, end);
    const newline = window.lastIndexOf('\n');
    const space = window.lastIndexOf(' ');
    const boundary = newline > MAX_PIECE / 2 ? newline : space > MAX_PIECE / 2 ? space : -1;
    if (boundary >= 0) end = start + boundary + 1;
    // Never split a surrogate pair: half a character would count as garbage.
    else if (isLowSurrogate(text.charCodeAt(end))) end -= 1;
    yield text.slice(start, end);
    start = end;
  }
  if (start < text.length) yield text.slice(start);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The layer-1 cost of a skill: what one catalogue entry adds to a system prompt. */
export function countCatalogueEntryTokens(name: string, description: string): number {
  return countTokens(`<skill>\n<name>${name}</name>\n<description>${description}</description>\n</skill>\n`);
}
