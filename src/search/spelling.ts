import { distance } from 'fastest-levenshtein';
import { isCjkTerm } from './analyze.js';

/**
 * Typo tolerance: the index's terms by first letter and length, each with the set of letters it
 * holds, so a misspelt word is compared with the few terms that could be within an edit or two of it.
 * Terms join as the index first sees them (it keeps them until it is compacted, and then makes its
 * buckets again). A bucket holds term ids (the index's dictionary spells them), not strings: a
 * large catalogue's vocabulary is not kept a second time in the heap.
 */
export class SpellingBuckets {
  private readonly buckets = new Map<number, SpellingBucket>();

  /** @param termOf the term the index holds under an id given to add() */
  constructor(private readonly termOf: (id: number) => string) {}

  add(term: string, id: number): void {
    // A misspelt word is read as another word: never as a CJK pair, a number or an identifier.
    if (isCjkTerm(term) || /\d/.test(term)) return;
    const key = bucketOf(term[0]!, term.length);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { ids: new Int32Array(4), letters: new Int32Array(4), length: 0 };
      this.buckets.set(key, bucket);
    }
    if (bucket.length === bucket.ids.length) {
      const size = Math.ceil(bucket.length * 1.5);
      const ids = new Int32Array(size);
      ids.set(bucket.ids);
      const letters = new Int32Array(size);
      letters.set(bucket.letters);
      bucket.ids = ids;
      bucket.letters = letters;
    }
    bucket.ids[bucket.length] = id;
    bucket.letters[bucket.length] = lettersOf(term);
    bucket.length += 1;
  }

  /**
   * The most common term (by `dfOf`) within one edit (two for long words) of an unknown word, among
   * terms that share its first letter (typos rarely change it, and the scan stays small).
   */
  closest(term: string, dfOf: (candidate: string) => number): string | undefined {
    if (term.length < 4 || isCjkTerm(term) || /\d/.test(term)) return undefined;
    const allowed = term.length >= 8 ? 2 : 1;
    const letters = lettersOf(term);
    let best: string | undefined;
    let bestDistance = allowed + 1;
    let bestDf = 0;
    for (let length = term.length - allowed; length <= term.length + allowed; length++) {
      const bucket = this.buckets.get(bucketOf(term[0]!, length));
      if (!bucket) continue;
      const { ids, letters: held } = bucket;
      for (let at = 0; at < bucket.length; at++) {
        // An edit adds or drops at most two letters of the set a word holds: most of a large
        // catalogue's terms fail this before their edit distance is counted.
        if (bitCount(letters ^ held[at]!) > 2 * allowed) continue;
        const candidate = this.termOf(ids[at]!);
        const d = distance(term, candidate);
        if (d > allowed) continue;
        const df = dfOf(candidate);
        if (d < bestDistance || (d === bestDistance && df > bestDf)) {
          best = candidate;
          bestDistance = d;
          bestDf = df;
        }
      }
    }
    return best;
  }
}

/** Buckets of the terms a dictionary holds, ids in the order it gives them (later terms join as they come). */
export function spellingOf(dictionary: {
  keys(): Iterable<string>;
  termOf(id: number): string;
}): SpellingBuckets {
  const spelling = new SpellingBuckets((id) => dictionary.termOf(id));
  let id = 0;
  for (const term of dictionary.keys()) spelling.add(term, id++);
  return spelling;
}

interface SpellingBucket {
  ids: Int32Array;
  letters: Int32Array;
  length: number;
}

/** A bucket's key: the first letter's code and the length (a number: no string made per term). */
function bucketOf(first: string, length: number): number {
  return first.charCodeAt(0) * 0x10000 + length;
}

/** The letters a term holds as bits (a to z; other characters share the six bits above them). */
function lettersOf(term: string): number {
  let bits = 0;
  for (let at = 0; at < term.length; at++) {
    const code = term.charCodeAt(at);
    bits |= 1 << (code >= 97 && code <= 122 ? code - 97 : 26 + (code % 6));
  }
  return bits;
}

function bitCount(bits: number): number {
  let n = bits - ((bits >>> 1) & 0x55555555);
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return (((n + (n >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
