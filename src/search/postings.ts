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

/** Slots a catalogue has before a term's postings may be held dense (small indexes stay as they are). */
export const DENSE_FROM_SLOTS = 4096;

/**
 * Dense postings grow by this many slots at a time: a quarter more of a million slots would be half
 * a megabyte kept for growth in each common term's array.
 */
const DENSE_CHUNK = 16_384;

function denseSize(slots: number): number {
  return Math.ceil(slots / DENSE_CHUNK) * DENSE_CHUNK;
}

/**
 * The size of an array that must hold `needed` items after holding `held`: a quarter more. Every
 * publish adds a posting or a slot, and exact sizes would copy a long list on each; doubling would
 * keep up to twice the room a large catalogue needs.
 */
export function grownSize(held: number, needed: number): number {
  return Math.max(needed, Math.ceil(held * 1.25), Math.ceil(needed * 1.25), 16);
}

type GrowableArray = Uint8Array<ArrayBuffer> | Uint16Array<ArrayBuffer> | Int32Array<ArrayBuffer>;

/** `array` when it holds `needed` items, else a copy grown to grownSize (the per-slot arrays). */
export function withRoom<T extends GrowableArray>(array: T, needed: number): T {
  if (array.length >= needed) return array;
  const grown = new (array.constructor as new (length: number) => T)(grownSize(array.length, needed));
  grown.set(array as ArrayLike<number>);
  return grown;
}

/**
 * The postings of one term: document slots in increasing order, each followed by its packed counts, in
 * one array (one object per term matters: most terms of a large catalogue occur in one or two skills).
 *
 * A term more than half of a large catalogue's slots hold is held dense instead: its packed counts
 * by slot (DenseCounts), one or two bytes a slot rather than four a posting. Such terms are few, but
 * they hold most postings (a catalogue's common words), and every publish adds to them.
 */
export class Postings {
  /**
   * Per posting: slot << COUNT_BITS | packed counts, slots increasing. Most terms of a large catalogue
   * occur in one skill: theirs is kept in `first`, and the array is made for the second.
   */
  data: Uint32Array | undefined;
  /** Held dense: packed counts by slot (data is undefined then). */
  dense: DenseCounts | undefined;
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

  /** The i-th posting word (not for postings held dense: see forEach). */
  at(index: number): number {
    return this.data ? this.data[index]! : this.first;
  }

  /** Each posting's slot and packed counts, slots increasing. */
  forEach(visit: (slot: number, packed: number) => void): void {
    const dense = this.dense;
    if (dense) {
      for (let slot = 0; slot < dense.length; slot++) {
        const packed = dense.get(slot);
        if (packed !== 0) visit(slot, packed);
      }
      return;
    }
    for (let at = 0; at < this.length; at++) {
      const entry = this.at(at);
      visit(entry >>> COUNT_BITS, entry & COUNTS);
    }
  }

  /**
   * Adds counts of `slot`, the newest slot: joined into its posting when the term already has one
   * (another field of the same skill), else a new posting.
   */
  add(slot: number, packed: number): void {
    if (this.length > 0) {
      const dense = this.dense;
      if (dense) {
        const held = dense.get(slot);
        if (held !== 0) {
          dense.set(slot, held | packed);
          return;
        }
      } else {
        const last = this.length - 1;
        const entry = this.at(last);
        if (entry >>> COUNT_BITS === slot) {
          if (this.data) this.data[last] = (entry | packed) >>> 0;
          if (last === 0) this.first = (entry | packed) >>> 0;
          return;
        }
      }
    }
    this.push(slot, packed);
  }

  push(slot: number, packed: number): void {
    const dense = this.dense;
    if (dense) {
      if (slot >= dense.length) dense.grow(denseSize(slot + 1));
      dense.set(slot, packed);
      this.length += 1;
      return;
    }
    const entry = Postings.word(slot, packed);
    if (this.length === 0) {
      this.first = entry;
    } else {
      if (!this.data || this.length === this.data.length) {
        if (this.shouldBeDense(slot + 1, this.length + 1)) {
          this.makeDense(slot + 1);
          this.push(slot, packed);
          return;
        }
        const grown = new Uint32Array(grownSize(this.length, this.length + 1));
        if (this.data) grown.set(this.data);
        else grown[0] = this.first;
        this.data = grown;
      }
      this.data[this.length] = entry;
    }
    this.length += 1;
  }

  /** Gives back the room kept for growth (after a bulk build), held dense when that is smaller. */
  trim(slots: number): void {
    if (this.dense) {
      // Fewer than a quarter of the slots now (after a compaction): back to a list.
      if (this.length * 4 < slots) this.makeSparse();
      return;
    }
    if (this.shouldBeDense(slots, this.length)) this.makeDense(slots);
    else if (this.data && this.data.length > this.length) this.data = this.data.slice(0, this.length);
  }

  /** The packed counts of `slot`, or 0 when the term is not in it. */
  find(slot: number): number {
    if (this.dense) return this.dense.get(slot);
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

  /** Over half of a large catalogue's slots: one or two bytes a slot beat four a posting. */
  private shouldBeDense(slots: number, length: number): boolean {
    return slots >= DENSE_FROM_SLOTS && length * 2 > slots;
  }

  private makeDense(slots: number): void {
    const dense = new DenseCounts(denseSize(slots));
    for (let at = 0; at < this.length; at++) {
      const entry = this.at(at);
      dense.set(entry >>> COUNT_BITS, entry & COUNTS);
    }
    this.dense = dense;
    this.data = undefined;
  }

  private makeSparse(): void {
    const data = new Uint32Array(this.length);
    let at = 0;
    this.forEach((slot, packed) => {
      data[at++] = Postings.word(slot, packed);
    });
    this.length = at;
    this.first = data[0] ?? 0;
    this.data = data;
    this.dense = undefined;
  }
}

/** Distinct packed counts a term held one byte a slot can have (code 0 is "absent"). */
const NARROW_CODES = 255;

/**
 * A dense term's packed counts by slot, 0 where the term is absent. A common word takes few of the
 * 2,048 combinations of counts across a catalogue, so each slot holds one byte, a code into the
 * term's `palette` of the combinations it has; the 256th distinct combination widens the values to
 * the counts themselves, two bytes a slot.
 */
export class DenseCounts {
  /** By slot: 0, or a code into palette (narrow), or the packed counts (wide). */
  values: Uint8Array | Uint16Array;
  /** Narrow: packed counts by code (code 0 unused); undefined once wide. */
  palette: Uint16Array | undefined = new Uint16Array(NARROW_CODES + 1);
  /** Narrow: code by packed counts, 0 for combinations not yet seen. */
  private codes: Uint8Array | undefined = new Uint8Array(COUNTS + 1);
  private used = 0;

  constructor(slots: number) {
    this.values = new Uint8Array(slots);
  }

  get length(): number {
    return this.values.length;
  }

  get byteLength(): number {
    return this.values.byteLength + (this.palette?.byteLength ?? 0) + (this.codes?.byteLength ?? 0);
  }

  /** The packed counts of `slot`, 0 when the term is not in it (or the slot is past the end). */
  get(slot: number): number {
    const value = this.values[slot] ?? 0;
    return value === 0 || !this.palette ? value : this.palette[value]!;
  }

  /** Sets the packed counts of a slot below `length` (not 0). */
  set(slot: number, packed: number): void {
    const codes = this.codes;
    if (!codes) {
      this.values[slot] = packed;
      return;
    }
    let code = codes[packed]!;
    if (code === 0) {
      if (this.used === NARROW_CODES) {
        this.widen();
        this.values[slot] = packed;
        return;
      }
      code = ++this.used;
      codes[packed] = code;
      this.palette![code] = packed;
    }
    this.values[slot] = code;
  }

  /** Room for `slots` slots (more than held). */
  grow(slots: number): void {
    const grown = this.palette ? new Uint8Array(slots) : new Uint16Array(slots);
    grown.set(this.values);
    this.values = grown;
  }

  private widen(): void {
    const palette = this.palette!;
    const narrow = this.values;
    const wide = new Uint16Array(narrow.length);
    for (let slot = 0; slot < narrow.length; slot++) wide[slot] = palette[narrow[slot]!]!;
    this.values = wide;
    this.palette = undefined;
    this.codes = undefined;
  }
}

/** What an index's postings hold, for sizing (the benches). */
export interface PostingStats {
  postings: number;
  /** Terms whose postings are arrays (the rest hold their one posting in the dictionary). */
  listTerms: number;
  denseTerms: number;
  /** Dense terms held one byte a slot (DenseCounts.palette). */
  narrowTerms: number;
  /** Bytes of the postings' arrays. */
  postingBytes: number;
}

export function postingStats(held: Iterable<Postings | number>): PostingStats {
  const stats = { postings: 0, listTerms: 0, denseTerms: 0, narrowTerms: 0, postingBytes: 0 };
  for (const list of held) {
    if (typeof list === 'number') {
      stats.postings += 1;
      continue;
    }
    stats.postings += list.length;
    if (list.dense) stats.denseTerms += 1;
    else stats.listTerms += 1;
    stats.postingBytes += list.dense?.byteLength ?? list.data?.byteLength ?? 0;
    if (list.dense?.palette) stats.narrowTerms += 1;
  }
  return stats;
}
