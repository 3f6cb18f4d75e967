/**
 * The slot of each skill name in the search index, as an open-addressing table of numbers.
 *
 * A `Map` from a million names costs about 28 bytes an entry in every replica (its hash table holds
 * key, value and chain for each); this table holds 4 to 8 bytes a name, and the names themselves stay
 * where the index keeps them, by slot. Lookups hash the name (FNV-1a over its UTF-16 code units) and
 * probe linearly, comparing the names of the slots found.
 */
export class NameSlots {
  /** slot + 1 per cell; EMPTY never used, REMOVED once used (probes go on past it). */
  private cells = new Int32Array(MIN_CELLS);
  private count = 0;
  /** Cells not EMPTY: live ones and REMOVED. */
  private filled = 0;

  /** @param nameOf the name the index holds at `slot` (undefined once removed there). */
  constructor(private readonly nameOf: (slot: number) => string | undefined) {}

  get size(): number {
    return this.count;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get(name: string): number | undefined {
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let at = hashOf(name) & mask; ; at = (at + 1) & mask) {
      const cell = cells[at]!;
      if (cell === EMPTY) return undefined;
      if (cell !== REMOVED && this.nameOf(cell - 1) === name) return cell - 1;
    }
  }

  /**
   * Puts `name` at `slot`, replacing its slot if it had one. The index must already hold `name` at
   * `slot` (nameOf(slot) === name): probes compare names through it.
   */
  set(name: string, slot: number): void {
    if ((this.filled + 1) * 2 > this.cells.length) this.resize();
    const cells = this.cells;
    const mask = cells.length - 1;
    let free = -1;
    for (let at = hashOf(name) & mask; ; at = (at + 1) & mask) {
      const cell = cells[at]!;
      if (cell === EMPTY) {
        if (free < 0) {
          free = at;
          this.filled += 1;
        }
        break;
      }
      if (cell === REMOVED) {
        if (free < 0) free = at;
      } else if (this.nameOf(cell - 1) === name) {
        cells[at] = slot + 1;
        return;
      }
    }
    cells[free] = slot + 1;
    this.count += 1;
  }

  /** Forgets `name` (call it while the index still holds the name at its slot). */
  delete(name: string): boolean {
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let at = hashOf(name) & mask; ; at = (at + 1) & mask) {
      const cell = cells[at]!;
      if (cell === EMPTY) return false;
      if (cell !== REMOVED && this.nameOf(cell - 1) === name) {
        cells[at] = REMOVED;
        this.count -= 1;
        return true;
      }
    }
  }

  /** Holds `names` by their positions as slots, and nothing else (after the index renumbers them). */
  reset(names: readonly string[]): void {
    this.cells = new Int32Array(cellsFor(names.length, 2));
    this.count = 0;
    this.filled = 0;
    for (let slot = 0; slot < names.length; slot++) this.set(names[slot]!, slot);
  }

  /** Bytes of the table, for sizing. */
  get byteLength(): number {
    return this.cells.byteLength;
  }

  /** At least three cells a live name (growing, or dropping REMOVED cells), then half full at most. */
  private resize(): void {
    const old = this.cells;
    this.cells = new Int32Array(cellsFor(this.count + 1, 3));
    this.count = 0;
    this.filled = 0;
    for (const cell of old) {
      if (cell === EMPTY || cell === REMOVED) continue;
      this.set(this.nameOf(cell - 1)!, cell - 1);
    }
  }
}

const EMPTY = 0;
const REMOVED = -1;
const MIN_CELLS = 16;

/** The least power of two above `times` cells per name (set() keeps the table at most half full). */
function cellsFor(count: number, times: number): number {
  let cells = MIN_CELLS;
  while (cells <= count * times) cells *= 2;
  return cells;
}

/** FNV-1a over the name's UTF-16 code units. */
function hashOf(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
