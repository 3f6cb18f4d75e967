/** The postings lists of the search index (search-index.ts) and how a posting packs its counts. */

/**
 * One posting is one 32-bit word: the document slot in the high 21 bits, and the term's count in each
 * field in the low 11 (name 1 bit, description 3, headings 2, body 5). Counts are capped there: BM25
 * saturates long before (a body count of 31 scores within 3% of 60), and four bytes a posting keep
 * a large catalogue's index small.
 */
export const SHIFT = [0, 1, 4, 6] as const;
export const MASK = [0x1, 0x7, 0x3, 0x1f] as const;
export const COUNT_BITS = 11;
export const COUNTS = (1 << COUNT_BITS) - 1;
/** Slots one index can number (compaction renumbers them from 0). */
export const MAX_SLOTS = 2 ** (32 - COUNT_BITS);

/**
 * The postings of one term: document slots in increasing order, each followed by its packed counts, in
 * one array (one object per term matters: most terms of a large catalogue occur in one or two skills).
 */
export class Postings {
  /**
   * Per posting: slot << COUNT_BITS | packed counts, slots increasing. Most terms of a large catalogue
   * occur in one skill: theirs is kept in `first`, and the array is made for the second.
   */
  data: Uint32Array | undefined;
  first = 0;
  length = 0;

  /** One posting's word: what the index holds for a term until a second skill has it. */
  static word(slot: number, packed: number): number {
    return ((slot << COUNT_BITS) | packed) >>> 0;
  }

  /** What the index holds for a term as postings: itself, or a term's one posting word made into them. */
  static of(held: Postings | number): Postings {
    if (typeof held !== 'number') return held;
    const word = held;
    const postings = new Postings();
    postings.first = word;
    postings.length = 1;
    return postings;
  }

  /**
   * Documents holding the term, counting replaced and removed ones until the next compaction (which
   * runs before they are a quarter of all), so a removal touches no postings.
   */
  get df(): number {
    return this.length;
  }

  /** The i-th posting word. */
  at(index: number): number {
    return this.data ? this.data[index]! : this.first;
  }

  push(slot: number, packed: number): void {
    const entry = Postings.word(slot, packed);
    if (this.length === 0) {
      this.first = entry;
    } else {
      if (!this.data || this.length === this.data.length) {
        const grown = new Uint32Array(Math.max(2, Math.ceil(this.length * 1.5)));
        if (this.data) grown.set(this.data);
        else grown[0] = this.first;
        this.data = grown;
      }
      this.data[this.length] = entry;
    }
    this.length += 1;
  }

  /** Gives back the room kept for growth (after a bulk build). */
  trim(): void {
    if (this.data && this.data.length > this.length) this.data = this.data.slice(0, this.length);
  }

  /** The packed counts of `slot`, or 0 when the term is not in it. */
  find(slot: number): number {
    let low = 0;
    let high = this.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const entry = this.at(middle);
      const at = entry >>> COUNT_BITS;
      if (at === slot) return entry & COUNTS;
      if (at < slot) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }
}
