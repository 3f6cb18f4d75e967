/** The k best candidates by a heap (src/search/top-k.ts): the same answer as sorting everything. */
import { describe, expect, it } from 'vitest';
import { bestByKey, kthHighest } from '../../src/search/top-k.js';

/** A fixed pseudo-random sequence in [0, 1), so a failure can be replayed. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe('bestByKey', () => {
  it('answers what a full sort and filter answer, equal keys ranked by the comparison', () => {
    const random = sequence(7);
    for (let round = 0; round < 200; round++) {
      const count = Math.floor(random() * 300);
      // Few distinct scores, so ties are common and the second key decides.
      const scores = Array.from({ length: count }, () => Math.floor(random() * 20));
      // Keys side by side with other numbers (stride 2, offset 1), as the search index keeps them.
      const keys = new Float64Array(count * 2);
      scores.forEach((score, i) => {
        keys[2 * i] = random();
        keys[2 * i + 1] = score;
      });
      const candidates = Int32Array.from({ length: count }, (_, i) => i).sort(() => random() - 0.5);
      const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
      const admit = (i: number) => i % 3 !== 0;
      const k = Math.floor(random() * 15);
      const expected = [...candidates]
        .filter(admit)
        .sort((a, b) => scores[b]! - scores[a]! || a - b)
        .slice(0, k);
      expect(bestByKey(candidates, k, keys, 2, 1, better, admit)).toEqual(expected);
    }
  });

  it('asks the filter only of candidates that would be kept', () => {
    const asked: number[] = [];
    const candidates = [50, 40, 30, 20, 10, 60];
    const keys = Float64Array.from({ length: 61 }, (_, i) => i);
    const best = bestByKey(
      candidates,
      2,
      keys,
      1,
      0,
      (a, b) => a > b,
      (candidate) => {
        asked.push(candidate);
        return true;
      },
    );
    expect(best).toEqual([60, 50]);
    // 30, 20 and 10 cannot beat the two kept before them: never asked.
    expect(asked).toEqual([50, 40, 60]);
  });
});

describe('kthHighest', () => {
  it('answers the k-th highest admitted value, or -Infinity when fewer are admitted', () => {
    const random = sequence(11);
    for (let round = 0; round < 200; round++) {
      const count = Math.floor(random() * 200);
      const values = Array.from({ length: count }, () => Math.floor(random() * 50) / 7);
      const candidates = Array.from({ length: count }, (_, i) => i);
      const admit = (i: number) => i % 5 !== 2;
      const k = 1 + Math.floor(random() * 12);
      const admitted = candidates
        .filter(admit)
        .map((i) => values[i]!)
        .sort((a, b) => b - a);
      const expected = admitted.length < k ? Number.NEGATIVE_INFINITY : admitted[k - 1];
      expect(kthHighest(candidates, k, (i) => values[i]!, admit)).toBe(expected);
    }
  });
});
