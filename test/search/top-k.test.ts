/** The k best candidates by a heap (src/search/top-k.ts): the same answer as sorting everything. */
import { describe, expect, it } from 'vitest';
import { bestOf } from '../../src/search/top-k.js';

describe('bestOf', () => {
  it('answers what a full sort and filter answer, ties broken the same way', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 200; round++) {
      const count = Math.floor(random() * 300);
      // Few distinct scores, so ties are common and the second key decides.
      const scores = Array.from({ length: count }, () => Math.floor(random() * 20));
      const candidates = Array.from({ length: count }, (_, i) => i).sort(() => random() - 0.5);
      const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
      const admit = (i: number) => i % 3 !== 0;
      const k = Math.floor(random() * 15);
      const expected = candidates
        .filter(admit)
        .sort((a, b) => scores[b]! - scores[a]! || a - b)
        .slice(0, k);
      expect(bestOf(candidates, k, better, admit)).toEqual(expected);
    }
  });

  it('asks the filter only of candidates that would be kept', () => {
    const asked: number[] = [];
    const candidates = [50, 40, 30, 20, 10, 60];
    const best = bestOf(
      candidates,
      2,
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
