/**
 * Ranking on the real catalogue: every public corpus skill (../shared/skill-corpus, some described in
 * Chinese), the seed skills and the benign trust fixtures, searched with requests written as people
 * write them. The ranker alone (the served faces share it: test/services/corpus.test.ts). Skipped where the
 * corpus is absent.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_ROOT, corpusSkills, SHARED } from '../../bench/search-eval/corpus.js';
import { isCjkTerm } from '../../src/search/analyze.js';
import { searchDocument } from '../../src/search/document.js';
import { type SearchHit, SearchIndex } from '../../src/search/search-index.js';

const SEEDS = fileURLToPath(new URL('../../skills-seed/', import.meta.url));
const BENIGN = join(SHARED, 'trust-fixtures', 'benign');

/**
 * Whether a hit matched the request only through related words written in another script than
 * the request (a Chinese word for an English request): a translation and nothing else.
 */
function onlyTranslated(hit: SearchHit, query: string): boolean {
  const requestInCjk = [...query].some((char) => isCjkTerm(char));
  return hit.matched.every((term) => term.related !== undefined && isCjkTerm(term.term) !== requestInCjk);
}

describe.skipIf(!existsSync(CORPUS_ROOT))('ranking on the real catalogue', () => {
  const index = new SearchIndex();
  const top5 = (query: string) => index.search(query, { limit: 5 });
  const names = (query: string) => top5(query).map((hit) => hit.name);

  beforeAll(() => {
    const roots = [CORPUS_ROOT, SEEDS, ...(existsSync(BENIGN) ? [BENIGN] : [])];
    for (const root of roots) for (const skill of corpusSkills(root)) index.put(searchDocument(skill));
    expect(index.size).toBeGreaterThan(200);
  });

  it('puts the code-review skill in the first five for a review request, not skills Chinese words pulled in', () => {
    expect(names('review my pull request for security issues')).toContain('requesting-code-review');
  });

  it.each([
    'review my pull request for security issues',
    'deploy this app to production tonight',
    'write a test plan for the checkout flow',
    'write release notes',
    'short plan: jest to vitest',
    'can someone look over my changes before I merge them',
    'find security holes in my login form',
    'make my website load faster',
    'break this big task into smaller steps',
    'audit our cloud costs',
  ])('lists no skill in the first five that only a related word of another language matched: %s', (query) => {
    const hits = top5(query);
    expect(hits.length).toBe(5);
    const translated = hits.filter((hit) => onlyTranslated(hit, query)).map((hit) => hit.name);
    expect(translated).toEqual([]);
  });

  it.each([
    // An English request still reaches a skill described in Chinese when its own words match it too.
    ['build a bot that can click around the desktop and use apps for me', ['computer-use-agents']],
    ['make a short promo video showing off our app features', ['remotion']],
    [
      'split this huge refactor into pieces that several agents can do at the same time',
      ['orchestrate-batch-refactor', 'dispatching-parallel-agents'],
    ],
    ['compare our product with the three biggest competitors', ['competitor-analysis']],
    ['plan the work before writing any code', ['writing-plans', 'create-plan']],
    ['check my web app for security vulnerabilities before launch', ['007', 'k8s-security-policies']],
    ['the reviewer left a bunch of comments on my PR, help me work through them', ['gh-address-comments']],
    ['my tests fail randomly in CI and I cannot figure out why', ['systematic-debugging', 'gh-fix-ci']],
  ])('finds a fitting skill in the first five for "%s"', (query, fitting) => {
    const found = names(query);
    expect(
      found.filter((name) => fitting.includes(name)),
      found.join(', '),
    ).not.toEqual([]);
  });
});
