import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';

/**
 * Counts o200k_base tokens with the vocabulary and pre-tokenizer of gpt-tokenizer (its
 * `data/o200k_base.tiktoken` and its split expression), held compactly.
 *
 * gpt-tokenizer's own encoder keeps the 200,000 tokens as JavaScript strings in a Map, next to the
 * module that spells them out as literals: about 20 MiB of heap and 30-40 MiB of RSS per replica, a
 * tenth of the memory budget. Counting needs neither strings nor a decoder: here the tokens' bytes
 * sit in one byte array, found through an open-addressing hash table of ranks (about 4.5 MiB, all of
 * it outside the garbage-collected heap). The merge is tiktoken's: repeatedly join the adjacent pair
 * whose bytes have the lowest rank (the first of equals), until no adjacent pair is a token; the
 * count is the parts left. test/render/o200k.test.ts checks it against gpt-tokenizer's countTokens.
 */

interface Vocabulary {
  /** Every token's bytes, back to back, in rank order. */
  bytes: Uint8Array;
  /** Where rank r's bytes start (r + 1: where they end). */
  offsets: Uint32Array;
  /** rank + 1 by hash of the bytes, linear probing; 0 is an empty slot. */
  slots: Int32Array;
  mask: number;
}

let vocabulary: Vocabulary | undefined;

/** Read on first use, so a process that never counts (the CLI, say) never pays for it. */
function loadVocabulary(): Vocabulary {
  const file = readFileSync(createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
  // Lines are `<base64 bytes> <rank>\n`, ranks 0, 1, 2, ... in order.
  let count = 0;
  for (let i = 0; i < file.length; i++) if (file[i] === NEWLINE) count++;
  if (file.length > 0 && file[file.length - 1] !== NEWLINE) count++;
  const offsets = new Uint32Array(count + 1);
  // Decoded base64 is at most three quarters of the file.
  const bytes = Buffer.allocUnsafe(Math.ceil((file.length * 3) / 4));
  let written = 0;
  let rank = 0;
  let start = 0;
  while (start < file.length) {
    let end = file.indexOf(NEWLINE, start);
    if (end < 0) end = file.length;
    const space = file.indexOf(SPACE, start);
    if (space < 0 || space > end || Number(file.toString('latin1', space + 1, end)) !== rank) {
      throw new Error(`o200k_base.tiktoken: line ${rank + 1} is not "<base64> ${rank}"`);
    }
    offsets[rank] = written;
    written += bytes.write(file.toString('latin1', start, space), written, 'base64');
    rank += 1;
    start = end + 1;
  }
  offsets[rank] = written;
  let size = 1;
  // At most 40% full: a lookup rarely probes past its first slot.
  while (size < rank * 2.5) size *= 2;
  const table: Vocabulary = {
    bytes: new Uint8Array(bytes.subarray(0, written)),
    offsets,
    slots: new Int32Array(size),
    mask: size - 1,
  };
  for (let r = 0; r < rank; r++) {
    let slot = hash(table.bytes, offsets[r]!, offsets[r + 1]!) & table.mask;
    while (table.slots[slot] !== 0) slot = (slot + 1) & table.mask;
    table.slots[slot] = r + 1;
  }
  return table;
}

const NEWLINE = 10;
const SPACE = 32;
const NONE = 0x7fffffff;

/** FNV-1a over bytes[start, end). */
function hash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** The rank of the token whose bytes are piece[start, end), or NONE. */
function rankOf(v: Vocabulary, piece: Uint8Array, start: number, end: number): number {
  const length = end - start;
  let slot = hash(piece, start, end) & v.mask;
  for (;;) {
    const entry = v.slots[slot]!;
    if (entry === 0) return NONE;
    const from = v.offsets[entry - 1]!;
    if (v.offsets[entry]! - from === length) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (v.bytes[from + i] !== piece[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return entry - 1;
    }
    slot = (slot + 1) & v.mask;
  }
}

// Scratch space, grown as longer pieces come: counting is synchronous, so one set serves every call.
const encoder = new TextEncoder();
let pieceBytes = new Uint8Array(1024);
let starts = new Int32Array(1024);
let pairRanks = new Int32Array(1024);

/** Tokens in one pre-token of `length` bytes (in pieceBytes): tiktoken's byte pair merge. */
function mergedCount(v: Vocabulary, length: number): number {
  if (length <= 1) return length;
  if (rankOf(v, pieceBytes, 0, length) !== NONE) return 1;
  if (starts.length < length + 1) {
    starts = new Int32Array(length + 1);
    pairRanks = new Int32Array(length + 1);
  }
  // parts: [starts[i], starts[i + 1]); pairRanks[i]: the rank of parts i and i + 1 joined.
  let parts = length;
  for (let i = 0; i <= length; i++) starts[i] = i;
  for (let i = 0; i < parts - 1; i++) pairRanks[i] = rankOf(v, pieceBytes, i, i + 2);
  while (parts > 1) {
    let lowest = NONE;
    let at = -1;
    for (let i = 0; i < parts - 1; i++) {
      if (pairRanks[i]! < lowest) {
        lowest = pairRanks[i]!;
        at = i;
      }
    }
    if (at < 0) break;
    // Join parts at and at + 1.
    starts.copyWithin(at + 1, at + 2, parts + 1);
    pairRanks.copyWithin(at + 1, at + 2, parts);
    parts -= 1;
    pairRanks[at] = at + 1 < parts ? rankOf(v, pieceBytes, starts[at]!, starts[at + 2]!) : NONE;
    if (at > 0) pairRanks[at - 1] = rankOf(v, pieceBytes, starts[at - 1]!, starts[at + 1]!);
  }
  return parts;
}

const splitter = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);

/**
 * o200k_base tokens in `text`, special-token strings such as "<|endoftext|>" counted as the text they
 * are. Quadratic in the length of one pre-token, as every BPE is: token-count.ts feeds it pieces.
 */
export function countO200k(text: string): number {
  vocabulary ??= loadVocabulary();
  const v = vocabulary;
  let total = 0;
  splitter.lastIndex = 0;
  for (let match = splitter.exec(text); match !== null; match = splitter.exec(text)) {
    const piece = match[0];
    const known = piece.length <= CACHED_PIECE_LENGTH ? pieceCounts.get(piece) : undefined;
    if (known !== undefined) {
      total += known;
      continue;
    }
    if (pieceBytes.length < piece.length * 3) pieceBytes = new Uint8Array(piece.length * 3);
    const { written } = encoder.encodeInto(piece, pieceBytes);
    const count = mergedCount(v, written);
    if (piece.length <= CACHED_PIECE_LENGTH) {
      if (pieceCounts.size >= CACHED_PIECES) pieceCounts.clear();
      pieceCounts.set(piece, count);
    }
    total += count;
  }
  return total;
}

/**
 * Counts of the pre-tokens seen last (words with their leading space, mostly): prose repeats its
 * words, so most pieces of a SKILL.md are counted once per process rather than merged again at every
 * publish. Bounded: emptied when full (at most a few MiB of short strings).
 */
const CACHED_PIECES = 50_000;
const CACHED_PIECE_LENGTH = 24;
const pieceCounts = new Map<string, number>();
