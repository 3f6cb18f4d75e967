import { FIELDS } from './document.js';
import { grownSize, Postings } from './postings.js';
import { TermDictionary } from './term-dictionary.js';

/**
 * The search index's parts without dead slots (names undefined), the live ones renumbered from 0 in
 * order, every term's postings rebuilt for them. `live` is how many slots hold a name; `lengths` holds
 * FIELDS.length length codes per slot.
 */
export function compacted(
  names: (string | undefined)[],
  versions: (string | undefined)[],
  lengths: Uint8Array,
  dictionary: TermDictionary,
  live: number,
): {
  names: string[];
  versions: (string | undefined)[];
  lengths: Uint8Array<ArrayBuffer>;
  dictionary: TermDictionary;
} {
  const renumber = new Int32Array(names.length).fill(-1);
  const keptNames: string[] = [];
  const keptVersions: (string | undefined)[] = [];
  const keptLengths = new Uint8Array(grownSize(0, live * FIELDS.length));
  names.forEach((name, slot) => {
    if (name === undefined) return;
    renumber[slot] = keptNames.length;
    keptVersions.push(versions[slot]);
    for (let f = 0; f < FIELDS.length; f++)
      keptLengths[keptNames.length * FIELDS.length + f] = lengths[slot * FIELDS.length + f]!;
    keptNames.push(name);
  });
  const kept = new TermDictionary();
  dictionary.forEach((held, term) => {
    const postings = new Postings();
    Postings.of(held).forEach((slot, packed) => {
      if (renumber[slot]! >= 0) postings.push(renumber[slot]!, packed);
    });
    postings.trim(keptNames.length);
    if (postings.length > 0) kept.set(term, postings.length === 1 ? postings.first : postings);
  });
  kept.trim();
  return { names: keptNames, versions: keptVersions, lengths: keptLengths, dictionary: kept };
}
