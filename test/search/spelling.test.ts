/** Typo tolerance's candidates (src/search/spelling.ts): the letter-set filter never drops a near term. */
import { distance } from 'fastest-levenshtein';
import { describe, expect, it } from 'vitest';
import { SpellingBuckets } from '../../src/search/spelling.js';

/** Buckets of `terms`, each under its position as the dictionary's id. */
function bucketsOf(terms: string[]): SpellingBuckets {
  const buckets = new SpellingBuckets((id) => terms[id]!);
  terms.forEach((term, id) => {
    buckets.add(term, id);
  });
  return buckets;
}

describe('SpellingBuckets', () => {
  it('answers the term a full scan answers: the nearest within the allowed edits, then the most common', () => {
    let seed = 3;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const letters = 'abcdefghijklmnopqrstuvwxyz-_';
    const word = (length: number) =>
      Array.from({ length }, () => letters[Math.floor(random() * 12)]).join('');
    const terms = [...new Set(Array.from({ length: 4000 }, () => `k${word(3 + Math.floor(random() * 8))}`))];
    // Each term's own frequency: no two tie, so the answer does not depend on the order terms are read.
    const df = new Map(terms.map((term, i) => [term, 1 + i]));
    const buckets = bucketsOf(terms);
    const edit = (term: string) => {
      const at = 1 + Math.floor(random() * (term.length - 1));
      const kind = Math.floor(random() * 3);
      const letter = letters[Math.floor(random() * 26)]!;
      if (kind === 0) return term.slice(0, at) + letter + term.slice(at + 1);
      if (kind === 1) return term.slice(0, at) + letter + term.slice(at);
      return term.slice(0, at) + term.slice(at + 1);
    };
    let corrected = 0;
    for (let round = 0; round < 400; round++) {
      const base = terms[Math.floor(random() * terms.length)]!;
      const typo = random() < 0.5 ? edit(base) : edit(edit(base));
      if (df.has(typo) || typo.length < 4) continue;
      const allowed = typo.length >= 8 ? 2 : 1;
      let expected: string | undefined;
      let bestDistance = allowed + 1;
      let bestDf = 0;
      for (const term of terms) {
        if (term.length < typo.length - allowed || term.length > typo.length + allowed) continue;
        const d = distance(typo, term);
        if (d > allowed) continue;
        if (d < bestDistance || (d === bestDistance && df.get(term)! > bestDf)) {
          expected = term;
          bestDistance = d;
          bestDf = df.get(term)!;
        }
      }
      if (expected) corrected += 1;
      expect(buckets.closest(typo, (term) => df.get(term)!)).toBe(expected);
    }
    expect(corrected).toBeGreaterThan(100);
  });

  it('leaves numbers, identifiers with digits and short words alone', () => {
    const buckets = bucketsOf(['deploy', 'v2deploy', 'kubernetes']);
    expect(buckets.closest('deplyo2', () => 1)).toBeUndefined();
    expect(buckets.closest('dep', () => 1)).toBeUndefined();
    expect(buckets.closest('kubernets', () => 1)).toBe('kubernetes');
  });
});
