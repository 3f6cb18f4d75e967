import { grownSize, withRoom } from './postings.js';

/**
 * A search breaks ties between equal scores by name. Over a large catalogue a common word can leave
 * a hundred thousand skills level with the k-th best, and comparing their names reads a string from
 * a random place in the heap for each. A two-byte key per slot, the name's first three characters in
 * an order that agrees with the names' own, settles most of those comparisons from an array read in
 * slot order; the names themselves are compared only when the keys are equal, or when a name starts
 * with a character skill names do not hold (which has no key).
 */
export class NameOrder {
  private keys = new Uint16Array(0);

  /** Keys the name of a new slot (or of one renumbered by compaction). */
  set(slot: number, name: string): void {
    this.keys = withRoom(this.keys, slot + 1);
    this.keys[slot] = nameKey(name);
  }

  /** Keys every slot again (after compaction renumbered them). */
  reset(names: readonly string[]): void {
    this.keys = new Uint16Array(grownSize(0, names.length));
    names.forEach((name, slot) => {
      this.keys[slot] = nameKey(name);
    });
  }

  /** Whether the name of slot `a` sorts before that of slot `b` (as `<` on the strings does). */
  before(a: number, b: number, names: readonly (string | undefined)[]): boolean {
    const x = this.keys[a]!;
    const y = this.keys[b]!;
    if (x !== y && x !== NO_KEY && y !== NO_KEY) return x < y;
    return names[a]! < names[b]!;
  }

  get byteLength(): number {
    return this.keys.byteLength;
  }
}

/** Characters a key orders: the end of the name, `-`, digits, lower-case letters (skill names' own). */
const RADIX = 38;
const KEYED = 3;
/** A name whose first characters are not all keyed: its slot is compared by name. */
const NO_KEY = 0xffff;

/**
 * The name's first KEYED characters as digits of base RADIX, each digit increasing with the character
 * code and 0 past the end, so that a lower key means an earlier name.
 */
export function nameKey(name: string): number {
  let key = 0;
  for (let at = 0; at < KEYED; at++) {
    const digit = at < name.length ? digitOf(name.charCodeAt(at)) : 0;
    if (digit < 0) return NO_KEY;
    key = key * RADIX + digit;
  }
  return key;
}

function digitOf(code: number): number {
  if (code === 0x2d) return 1; // -
  if (code >= 0x30 && code <= 0x39) return code - 0x30 + 2; // 0-9
  if (code >= 0x61 && code <= 0x7a) return code - 0x61 + 12; // a-z
  return -1;
}
