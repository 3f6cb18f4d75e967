/**
 * The order a prompt budget drops skills in (src/render/drop-order.ts): the same as a full comparison
 * sort, and the first part of its reverse (the keep order) ranked alone.
 */
import { describe, expect, it } from 'vitest';
import { dropOrder, keepOrder } from '../../src/render/drop-order.js';
import type { PromptSkill } from '../../src/render/prompt-types.js';

/** Entry counts too large to pack into the never-loaded skills' sort keys (the comparison sort then). */
const HUGE = 2 ** 28;

function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** The rule as written: fewest loads, least recently loaded, longest entry, then by name. */
function expectedOrder(skills: readonly PromptSkill[], tokens: Int32Array): number[] {
  const loaded = (i: number) => skills[i]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  return Array.from(skills, (_, i) => i).sort((a, b) => {
    if (skills[a]!.loadCount !== skills[b]!.loadCount) return skills[a]!.loadCount - skills[b]!.loadCount;
    if (loaded(a) !== loaded(b)) return loaded(a) < loaded(b) ? -1 : 1;
    if (tokens[a] !== tokens[b]) return tokens[b]! - tokens[a]!;
    return skills[a]!.name < skills[b]!.name ? -1 : 1;
  });
}

/** Skills and entry counts for one round: names in catalogue order or not, few distinct counts. */
function roundOf(random: () => number, round: number): { skills: PromptSkill[]; tokens: Int32Array } {
  const count = Math.floor(random() * 400);
  const names = [...new Set(Array.from({ length: count }, () => `s-${Math.floor(random() * 100_000)}`))];
  // Half the rounds in the catalogue's order (by name), half in a search's order (any).
  if (round % 2 === 0) names.sort();
  const huge = round % 5 === 0;
  // Some rounds load most skills, so the loaded alone fill the kept part.
  const loadedShare = round % 3 === 0 ? 0.8 : 0.2;
  const skills = names.map((name) => {
    const loads = random() < loadedShare ? Math.floor(random() * 4) : 0;
    const when = random() < 0.5 ? null : new Date(1_700_000_000_000 + Math.floor(random() * 5) * 1000);
    return { name, loadCount: loads, lastLoadedAt: loads === 0 && random() < 0.9 ? null : when };
  }) as unknown as PromptSkill[];
  // Few distinct counts, so the name decides often.
  const tokens = Int32Array.from(skills, () => Math.floor(random() * 6) + (huge ? HUGE : 0));
  return { skills, tokens };
}

describe('keepOrder', () => {
  it('is the first part of the drop order reversed, however much of it is asked for', () => {
    const random = sequence(11);
    for (let round = 0; round < 300; round++) {
      const { skills, tokens } = roundOf(random, round);
      const reversed = expectedOrder(skills, tokens).reverse();
      for (const limit of [0, 1, Math.floor(random() * skills.length), skills.length, skills.length + 3]) {
        expect([...keepOrder(skills, tokens, limit)]).toEqual(reversed.slice(0, limit));
      }
    }
  });
});

describe('dropOrder', () => {
  it('drops as the rule says, in name order or not, with small or huge counts, loaded or not', () => {
    const random = sequence(5);
    for (let round = 0; round < 300; round++) {
      const count = Math.floor(random() * 400);
      const names = [...new Set(Array.from({ length: count }, () => `s-${Math.floor(random() * 100_000)}`))];
      // Half the rounds in the catalogue's order (by name), half in a search's order (any).
      if (round % 2 === 0) names.sort();
      const huge = round % 5 === 0;
      const skills = names.map((name) => {
        const loads = random() < 0.8 ? 0 : Math.floor(random() * 4);
        const when = random() < 0.5 ? null : new Date(1_700_000_000_000 + Math.floor(random() * 5) * 1000);
        return { name, loadCount: loads, lastLoadedAt: loads === 0 && random() < 0.9 ? null : when };
      }) as unknown as PromptSkill[];
      // Few distinct counts, so the name decides often.
      const tokens = Int32Array.from(skills, () => Math.floor(random() * 6) + (huge ? HUGE : 0));
      expect([...dropOrder(skills, tokens)]).toEqual(expectedOrder(skills, tokens));
    }
  });
});
