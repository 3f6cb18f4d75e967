import type { AnalyzedWord } from './analyze.js';
import { idfOf } from './field-weights.js';

/** How much one word's learned loads count, against the word's weight in a field match (about 1-2). */
const LEARNED_WEIGHT = 0.25;

/** What learnedBoosts asks of the index. */
export interface LearnedIndex {
  slots: number;
  slotOf(name: string): number | undefined;
  df(term: string): number;
}

/**
 * What searches taught, per slot: for each word of the request that agents searched with before
 * loading a skill the search listed, that skill gains the word's weight times the log of those loads,
 * so a skill confirmed by use rises among similar matches, and can surface for words it lacks.
 */
export function learnedBoosts(
  words: readonly AnalyzedWord[],
  learned: (term: string) => ReadonlyMap<string, number> | undefined,
  index: LearnedIndex,
): Map<number, { boost: number; words: string[] }> | undefined {
  let boosts: Map<number, { boost: number; words: string[] }> | undefined;
  for (const { term, word } of words) {
    const loadsBySkill = learned(term);
    if (!loadsBySkill) continue;
    const idf = idfOf(index.slots, index.df(term));
    for (const [name, loads] of loadsBySkill) {
      const slot = index.slotOf(name);
      if (slot === undefined || loads <= 0) continue;
      boosts ??= new Map();
      const entry = boosts.get(slot) ?? { boost: 0, words: [] };
      entry.boost += LEARNED_WEIGHT * idf * Math.log1p(loads);
      entry.words.push(word);
      boosts.set(slot, entry);
    }
  }
  return boosts;
}
