/**
 * Pruning (search-index.ts: once no skill not found yet can reach the first k, long postings are read
 * for the skills already found alone) must never change an answer: the first k of a search asking for
 * k are the first k of the same search asking for every match, with the same scores. The catalogue is
 * large enough that common words hold more postings than pruning starts from, and its words are spread
 * over fields and frequencies so partial scores and coverage vary from skill to skill.
 */
import { describe, expect, it } from 'vitest';
import { type SearchableSkill, searchDocument } from '../../src/search/document.js';
import { SearchIndex } from '../../src/search/search-index.js';

/** A fixed pseudo-random sequence, so a failure can be replayed. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return (state >>> 8) / 2 ** 24;
  };
}

/** Words, each held by about its share of the skills (the body; a tenth of those in the description). */
const WORDS: [string, number][] = [
  ['release', 0.9],
  ['pipeline', 0.7],
  ['deploy', 0.55],
  ['workflow', 0.45],
  ['review', 0.4],
  ['schema', 0.3],
  ['dashboard', 0.25],
  ['kubernetes', 0.2],
  ['terraform', 0.12],
  ['postgres', 0.08],
  ['harbor', 0.03],
  ['quay', 0.004],
];

function catalogue(count: number): SearchableSkill[] {
  const next = sequence(29);
  const pick = () => WORDS[Math.floor(next() * WORDS.length)]![0];
  return Array.from({ length: count }, (_, i) => {
    if (next() < 0.01) {
      // A skill about several words at once (in its name and description, little else): found late,
      // by the common words, it still scores near the most they can add.
      const about = [...new Set([pick(), pick(), pick(), pick()])];
      return {
        name: `${about.join('-')}-${i}`,
        description: `${about.join(' ')}: ${about.join(', ')} and ${about.join(' with ')}.`,
        body: `# ${about.join(' ')}\n\n${about.join(' ')}.`,
      };
    }
    const described: string[] = [];
    const body: string[] = [];
    for (const [word, share] of WORDS) {
      if (next() >= share) continue;
      if (next() < 0.1) described.push(word);
      const times = 1 + Math.floor(next() * next() * 6);
      for (let k = 0; k < times; k++) body.push(word);
    }
    const padding = ' and then the next step'.repeat(Math.floor(next() * 12));
    return {
      name: `skill-${i}`,
      description: `Handles task ${i % 89}${described.length ? ` with ${described.join(' ')}` : ''}.`,
      body: `# Steps\n\nWork through${padding} ${body.join(' ')}.`,
    };
  });
}

/** Every pair and triple of words, rare and common, and a few requests in full. */
const QUERIES = [
  ...WORDS.flatMap(([a], i) => WORDS.slice(i + 1).map(([b]) => `${a} ${b}`)),
  ...WORDS.flatMap(([a], i) =>
    WORDS.slice(i + 2).map(([b], j) => `${a} ${b} ${WORDS[(i + j + 5) % WORDS.length]![0]}`),
  ),
  'review the release workflow for the kubernetes deploy',
  'dashboard release pipeline deploy workflow review',
  'quay harbor terraform postgres kubernetes',
  'release the pipelines and deploy workflows after review',
];

describe('a pruned search', () => {
  it('answers its first k exactly as a search that reads every posting', () => {
    const index = new SearchIndex();
    for (const skill of catalogue(12_000)) index.put(searchDocument(skill));
    index.trim();
    let compared = 0;
    for (const query of QUERIES) {
      const every = index.search(query, { limit: 1_000_000 });
      for (const k of [1, 3, 10, 50]) {
        const first = index.search(query, { limit: k });
        expect(
          first.map(({ name, score }) => ({ name, score })),
          `${query} (first ${k})`,
        ).toEqual(every.slice(0, k).map(({ name, score }) => ({ name, score })));
        compared += 1;
      }
    }
    expect(compared).toBe(QUERIES.length * 4);
  });
});
