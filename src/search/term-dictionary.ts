import type { Postings } from './postings.js';

/**
 * The search index's terms and what it holds for each (postings, or a term's one posting word), kept
 * outside the JavaScript heap.
 *
 * A `Map` from a large catalogue's terms held a string, a table entry and most often a boxed number
 * per term (a posting word above 2^30) in the heap: at a million skills three million objects that
 * every full garbage collection marks again. Here a term's UTF-16 code units sit in one growing array
 * (its id is its position in the order terms arrived), an open-addressing table of ids finds a term
 * by FNV-1a of its code units, and a term's one posting word is a slot in a Uint32Array; only terms
 * with postings objects are in an array of them. Terms are never removed one by one: the index compacts
 * into a new dictionary instead.
 */
export class TermDictionary {
  /** Each term's code units, one after another. */
  private units: Uint16Array<ArrayBuffer> = new Uint16Array(1024);
  /** Where term `id`'s code units start; term `id` ends where term `id + 1` starts. */
  private starts = new Uint32Array(MIN_TERMS + 1);
  /**
   * Term `id`'s one posting word while it has one posting; once it has postings in `lists`, their
   * position there (an array read, where a map by id cost a hash lookup for every common term).
   */
  private words = new Uint32Array(MIN_TERMS);
  /** 1 where term `id` has postings in `lists`. */
  private listed = new Uint8Array(MIN_TERMS);
  /** Postings of the terms that have more than one (a hole where a term went back to one posting). */
  private readonly lists: (Postings | undefined)[] = [];
  /** id + 1 per cell, 0 for an empty cell; at most half the cells are used. */
  private cells = new Int32Array(MIN_CELLS);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** What the dictionary holds for `term`: its postings, its one posting word, or undefined. */
  get(term: string): Postings | number | undefined {
    const id = this.idOf(term, 0, term.length);
    return id < 0 ? undefined : this.valueOf(id);
  }

  /** Holds `value` for `term` (adding the term when new); answers the term's id. */
  set(term: string, value: Postings | number): number {
    let id = this.idOf(term, 0, term.length);
    if (id < 0) id = this.add(term, 0, term.length);
    this.setValue(id, value);
    return id;
  }

  /**
   * The id of the term `text` spells from `start` to `end`, or -1 when it is not held: a build reads
   * terms out of their stored form this way, without a string for each.
   */
  idOf(text: string, start: number, end: number, hash = hashOf(text, start, end)): number {
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const cell = cells[at]!;
      if (cell === 0) return -1;
      if (this.holds(cell - 1, text, start, end)) return cell - 1;
    }
  }

  /** Adds the term `text` spells from `start` to `end` (not held yet); answers its id. */
  add(text: string, start: number, end: number, hash = hashOf(text, start, end)): number {
    const id = this.count;
    if (id + 1 >= this.words.length) this.growTerms();
    const from = this.starts[id]!;
    const to = from + end - start;
    if (to > this.units.length) this.units = grown(this.units, to);
    for (let i = start; i < end; i++) this.units[from + i - start] = text.charCodeAt(i);
    this.starts[id + 1] = to;
    this.count += 1;
    if (this.count * 2 > this.cells.length) this.rehash(this.cells.length * 2);
    else this.place(id, hash);
    return id;
  }

  /** What is held for term `id`: its postings, or its one posting word. */
  valueOf(id: number): Postings | number {
    return this.listed[id] === 1 ? this.lists[this.words[id]!]! : this.words[id]!;
  }

  /** Holds `value` for term `id`. */
  setValue(id: number, value: Postings | number): void {
    if (typeof value === 'number') {
      if (this.listed[id] === 1) this.lists[this.words[id]!] = undefined;
      this.listed[id] = 0;
      this.words[id] = value;
    } else if (this.listed[id] === 1) {
      this.lists[this.words[id]!] = value;
    } else {
      this.listed[id] = 1;
      this.words[id] = this.lists.length;
      this.lists.push(value);
    }
  }

  /** Each term with what is held for it, in the order the terms arrived. */
  forEach(visit: (value: Postings | number, term: string) => void): void {
    for (let id = 0; id < this.count; id++) visit(this.valueOf(id), this.termOf(id));
  }

  /** What is held for each term (no term strings made). */
  *values(): IterableIterator<Postings | number> {
    for (let id = 0; id < this.count; id++) yield this.valueOf(id);
  }

  *keys(): IterableIterator<string> {
    for (let id = 0; id < this.count; id++) yield this.termOf(id);
  }

  /** Bytes of the dictionary's arrays, for sizing. */
  get byteLength(): number {
    const arrays = [this.units, this.starts, this.words, this.listed, this.cells];
    return arrays.reduce((sum, array) => sum + array.byteLength, 0);
  }

  /** The term held under `id` (ids are 0 to size - 1, in the order terms arrived). */
  termOf(id: number): string {
    return String.fromCharCode(...this.units.subarray(this.starts[id]!, this.starts[id + 1]!));
  }

  /** Whether term `id` is what `text` spells from `start` to `end`, comparing code units. */
  private holds(id: number, text: string, start: number, end: number): boolean {
    const from = this.starts[id]!;
    if (this.starts[id + 1]! - from !== end - start) return false;
    const units = this.units;
    for (let i = start; i < end; i++) if (units[from + i - start] !== text.charCodeAt(i)) return false;
    return true;
  }

  private place(id: number, hash: number): void {
    const cells = this.cells;
    const mask = cells.length - 1;
    let at = hash & mask;
    while (cells[at] !== 0) at = (at + 1) & mask;
    cells[at] = id + 1;
  }

  private rehash(size: number): void {
    this.cells = new Int32Array(size);
    const units = this.units;
    for (let id = 0; id < this.count; id++) {
      let hash = TERM_HASH_START;
      for (let at = this.starts[id]!; at < this.starts[id + 1]!; at++)
        hash = extendTermHash(hash, units[at]!);
      this.place(id, hash >>> 0);
    }
  }

  /** Gives back the room kept for more terms: after building from many skills at once. */
  trim(): void {
    const count = this.count;
    if (this.words.length > count + 1) {
      this.words = this.words.slice(0, count + 1);
      this.listed = this.listed.slice(0, count + 1);
      this.starts = this.starts.slice(0, count + 2);
    }
    const used = this.starts[count]!;
    if (this.units.length > used) this.units = this.units.slice(0, used);
  }

  private growTerms(): void {
    const terms = Math.ceil(this.words.length * 1.5);
    const words = new Uint32Array(terms);
    words.set(this.words);
    this.words = words;
    const listed = new Uint8Array(terms);
    listed.set(this.listed);
    this.listed = listed;
    const starts = new Uint32Array(terms + 1);
    starts.set(this.starts);
    this.starts = starts;
  }
}

const MIN_TERMS = 64;
const MIN_CELLS = 128;
/**
 * A term's hash is FNV-1a over its UTF-16 code units: TERM_HASH_START extended by each unit, then
 * `>>> 0` (a reader of stored terms hashes a term as it scans for the term's end).
 */
export const TERM_HASH_START = 0x811c9dc5;

export function extendTermHash(hash: number, unit: number): number {
  return Math.imul(hash ^ unit, 0x01000193);
}

function hashOf(text: string, start: number, end: number): number {
  let hash = TERM_HASH_START;
  for (let i = start; i < end; i++) hash = extendTermHash(hash, text.charCodeAt(i));
  return hash >>> 0;
}

/** A quarter more than needed: every publish may add terms, and doubling keeps too much room. */
function grown(array: Uint16Array<ArrayBuffer>, needed: number): Uint16Array<ArrayBuffer> {
  const next = new Uint16Array(Math.max(needed, Math.ceil(array.length * 1.25), Math.ceil(needed * 1.25)));
  next.set(array);
  return next;
}
