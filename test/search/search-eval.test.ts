/**
 * The public search evaluation (../shared/search-eval) on the shared corpus, without distractors to
 * stay quick: every corpus folder published through the real HTTP stack, every query asked of
 * GET /skills?q= and the search_skills tool, and the bar held. Skipped where the corpus is absent.
 * Figures among 10,000 distractors come from `npm run bench:search` (docs/PERFORMANCE.md).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_ROOT, corpusFolders, evalQueries, QUERIES_FILE } from '../../bench/search-eval/corpus.js';
import {
  catalogueFace,
  measureFace,
  publishAll,
  type Send,
  searchSkillsFace,
} from '../../bench/search-eval/measure.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';

const present = existsSync(CORPUS_ROOT) && existsSync(QUERIES_FILE);

/** The acceptance bar of the search-eval README. */
const BAR = { recall5: 0.9, mrr10: 0.75 };

describe.skipIf(!present)('search evaluation on the public corpus', () => {
  let ctx: TestApp;
  let send: Send;

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_WRITES: '0' });
    send = async ({ method, url, headers, body }) => {
      const res = await ctx.app.inject({ method, url, headers, payload: body });
      return { status: res.statusCode, json: () => res.json() };
    };
    const { refused } = await publishAll(send, ADMIN_TOKEN, corpusFolders(), []);
    // The registry refuses a few corpus folders on purpose (invalid names, descriptions over 1024).
    expect(refused.length).toBeLessThan(10);
  }, 300_000);

  afterAll(async () => {
    await ctx?.close();
  });

  it.each([
    { name: 'GET /skills?q=', face: () => catalogueFace(send) },
    { name: 'search_skills (GET /search)', face: () => searchSkillsFace(send) },
  ])('$name puts a relevant skill in the first five for at least 90% of requests', async ({ name, face }) => {
    const result = await measureFace(name, face(), evalQueries());
    expect(result.errors).toBe(0);
    expect(result.recall5, JSON.stringify(result.misses.slice(0, 5))).toBeGreaterThanOrEqual(BAR.recall5);
    expect(result.mrr10).toBeGreaterThanOrEqual(BAR.mrr10);
  });
});
