/**
 * The search measurement without a server: the ranker alone over the corpus and distractors, for
 * quick iteration on ranking. `npm run bench:search -- --offline` runs it; the figures that count
 * come from the served search (bench/search-eval.ts without --offline).
 */
import { searchDocument } from '../../src/search/document.js';
import { DEFAULT_WEIGHTS, SearchIndex } from '../../src/search/search-index.js';
import { corpusSkills, evalQueries, score } from './corpus.js';
import { distractors } from './distractors.js';

const args = process.argv.slice(2);
const count = Number(args[args.indexOf('--distractors') + 1] ?? 10000) || 0;
const verbose = args.includes('--verbose');
const recombinedShare = args.includes('--recombined') ? Number(args[args.indexOf('--recombined') + 1]) : 0.3;
const weights = process.env.SEARCH_WEIGHTS ? JSON.parse(process.env.SEARCH_WEIGHTS) : undefined;

const real = corpusSkills();
const extra = distractors(count, real, { recombinedShare });
const index = new SearchIndex(
  weights
    ? {
        ...DEFAULT_WEIGHTS,
        ...weights,
        weight: { ...DEFAULT_WEIGHTS.weight, ...weights.weight },
        b: { ...DEFAULT_WEIGHTS.b, ...weights.b },
      }
    : undefined,
);
const half = Math.floor(extra.length / 2);
const started = performance.now();
for (const skill of extra.slice(0, half)) index.put(searchDocument(skill));
for (const skill of real) index.put(searchDocument(skill));
for (const skill of extra.slice(half)) index.put(searchDocument(skill));
const indexedMs = performance.now() - started;

const queries = args.includes('--queries') ? evalQueries(args[args.indexOf('--queries') + 1]) : evalQueries();
const times: number[] = [];
const results = queries.map(({ q, relevant }) => {
  const t0 = performance.now();
  const hits = index.search(q, { limit: 10 });
  times.push(performance.now() - t0);
  const got = hits.map((hit) => hit.name);
  if (verbose) {
    const rank = got.findIndex((name) => relevant.includes(name));
    if (rank < 0 || rank >= 5)
      console.log(
        `${rank < 0 ? 'MISS' : `@${rank + 1}`}  ${q.slice(0, 90)}\n   want ${relevant.join(', ')}\n   got  ${got.slice(0, 5).join(', ')}`,
      );
  }
  return { relevant, got };
});
times.sort((a, b) => a - b);
const { recall5, mrr10 } = score(results);
console.log(
  `skills ${real.length} + ${extra.length} distractors; indexed in ${indexedMs.toFixed(0)} ms; ` +
    `recall@5 ${recall5.toFixed(3)}  MRR@10 ${mrr10.toFixed(3)}  ` +
    `p50 ${times[Math.floor(times.length / 2)]!.toFixed(2)} ms  p95 ${times[Math.floor(times.length * 0.95)]!.toFixed(2)} ms`,
);
if (args.includes('--postings')) console.log(index.stats());
