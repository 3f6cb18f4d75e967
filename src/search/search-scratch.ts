import { grownSize, withRoom } from './postings.js';

/**
 * What a search of the index (SearchIndex.search) adds into, kept from search to search: per-slot
 * arrays at least as long as the index has slots, zeroed again after each search, so a search makes
 * no array of its own. Those of translations are made only once a request has some: 17 bytes a slot
 * most replicas never need.
 */
export class SearchScratch {
  /**
   * Per slot, what a search has summed: the score at 2 * slot and the request weight matched at
   * 2 * slot + 1 (side by side: a posting updates both, and one memory line serves the two). Single
   * precision: a search over a large catalogue's common terms waits on memory, so bytes a slot are
   * time (docs/PERFORMANCE.md); ranks come out as in double precision.
   */
  sums = new Float32Array(0);
  /**
   * Per slot, 1 while a search has scored it, LONE_TRANSLATION (search-index.ts) once found to match
   * translations alone (cleared with the scores).
   */
  touchedMarks = new Uint8Array(0);
  /** The slots a search has scored, in the order it found them (the first `touchedCount` of them). */
  touchedSlots = new Int32Array(0);
  /**
   * Per slot, the best score among the translations of the unit being read at 2 * slot, its coverage
   * at 2 * slot + 1 (side by side, as the sums are).
   */
  unitPairs = new Float32Array(0);
  /** Per slot, what translations added and their coverage, side by side: counted at the end of a search. */
  translatedPairs = new Float32Array(0);
  /** Per slot, how many units of translations matched. */
  translatedUnits = new Uint8Array(0);
  /**
   * The slots the translations of the unit being read matched: as long as the largest unit has
   * needed, so that a common translation's hundred thousand skills are not a list grown on the heap
   * in every search.
   */
  unitSlots = new Int32Array(0);

  /** Makes the arrays at least `slots` long (the translations' only when `translating`). */
  ensure(slots: number, translating: boolean): void {
    if (this.touchedMarks.length < slots) {
      const size = grownSize(this.touchedMarks.length, slots);
      this.sums = new Float32Array(2 * size);
      this.touchedMarks = new Uint8Array(size);
      this.touchedSlots = new Int32Array(size);
    }
    if (!translating || this.translatedUnits.length >= slots) return;
    const size = this.touchedMarks.length;
    this.unitPairs = new Float32Array(2 * size);
    this.translatedPairs = new Float32Array(2 * size);
    this.translatedUnits = new Uint8Array(size);
  }

  /** unitSlots with room for `needed` (what it held kept). */
  growUnitSlots(needed: number): Int32Array<ArrayBuffer> {
    this.unitSlots = withRoom(this.unitSlots, needed);
    return this.unitSlots;
  }

  get byteLength(): number {
    return [
      this.sums,
      this.touchedMarks,
      this.touchedSlots,
      this.unitPairs,
      this.translatedPairs,
      this.translatedUnits,
      this.unitSlots,
    ].reduce((sum, array) => sum + array.byteLength, 0);
  }
}
