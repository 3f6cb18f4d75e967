/**
 * Equal scores rank by name (as `<` orders the strings), however many skills are level with the k-th
 * best: the index settles most of those comparisons by a key of each name's first characters
 * (src/search/name-order.ts), which must never order two names otherwise than the names themselves.
 * And a phrase of the request with one translation in the index counts it as a phrase with several
 * counts the best of them.
 */
import { describe, expect, it } from 'vitest';
import { searchDocument } from '../../src/search/document.js';
import { NameOrder, nameKey } from '../../src/search/name-order.js';
import { SearchIndex } from '../../src/search/search-index.js';

/** A fixed pseudo-random sequence, so a failure can be replayed. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return (state >>> 8) / 2 ** 24;
  };
}

/** Names of skill names' own characters and of others (capitals, `_`, `.`, accents, CJK), short and long. */
function names(count: number, seed: number): string[] {
  const next = sequence(seed);
  const usual = 'abcz09-';
  const unusual = ['A', 'Z', '_', '.', '~', 'é', '审', ' '];
  return Array.from({ length: count }, () => {
    const length = Math.floor(next() * 6);
    let name = '';
    for (let at = 0; at < length; at++) {
      name +=
        next() < 0.1
          ? unusual[Math.floor(next() * unusual.length)]!
          : usual[Math.floor(next() * usual.length)]!;
    }
    return name;
  });
}

describe('name order', () => {
  it('orders two slots as `<` orders their names, whatever characters the names hold', () => {
    const all = [
      ...names(3_000, 7),
      '',
      'a',
      'a-',
      'a0',
      'aa',
      'ab',
      'abc',
      'abcd',
      'abd',
      'b',
      '-',
      '0',
      'z',
    ];
    const order = new NameOrder();
    all.forEach((name, slot) => {
      order.set(slot, name);
    });
    let keyed = 0;
    for (let a = 0; a < all.length; a += 3) {
      for (let b = 0; b < all.length; b += 7) {
        expect(order.before(a, b, all), `${JSON.stringify(all[a])} before ${JSON.stringify(all[b])}`).toBe(
          all[a]! < all[b]!,
        );
        if (nameKey(all[a]!) !== nameKey(all[b]!)) keyed += 1;
      }
    }
    // Most pairs are told apart by their keys alone (what makes the key worth its two bytes).
    expect(keyed).toBeGreaterThan(((all.length / 3) * (all.length / 7)) / 2);
  });

  it('keys names of skill names own characters in their order', () => {
    const sorted = [
      '',
      '-',
      '-a',
      '0',
      '09',
      '0a',
      '9zz',
      'a',
      'a-',
      'a-b',
      'a0',
      'ab',
      'abc',
      'abd',
      'b',
      'zzz',
    ];
    const keys = sorted.map(nameKey);
    for (let i = 1; i < keys.length; i++) expect(keys[i]!).toBeGreaterThan(keys[i - 1]!);
    // Names alike in their first three characters share a key: the names decide between them.
    expect(nameKey('abc-one')).toBe(nameKey('abc-two'));
  });
});

describe('skills level with the k-th best', () => {
  it('are ranked by name, many thousands of them, also after a compaction renumbers the slots', () => {
    const index = new SearchIndex();
    const level = [...new Set(names(4_000, 11).filter(Boolean))];
    // The same words for every skill: every score is equal, so only the names decide.
    for (const name of level)
      index.put(searchDocument({ name, description: 'Rotate the signing keys.', body: 'Rotate keys.' }));
    // As many skills about something else: words every skill holds are not searched (query-terms.ts).
    for (let i = 0; i < level.length; i++)
      index.put(searchDocument({ name: `other-${i}`, description: 'Water the garden.', body: '' }));
    const byName = [...level].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const limit of [1, 10, 50]) {
      const hits = index.search('rotate signing keys', { limit });
      expect(hits.map((hit) => hit.name)).toEqual(byName.slice(0, limit));
      expect(new Set(hits.map((hit) => hit.score)).size).toBe(1);
    }
    // Removing most skills compacts the index: slots renumbered, keys made again.
    const kept = new Set(byName.filter((_, i) => i % 5 === 0));
    for (const name of level) if (!kept.has(name)) index.remove(name);
    const hits = index.search('rotate signing keys', { limit: 20 });
    expect(hits.map((hit) => hit.name)).toEqual([...kept].slice(0, 20));
  });
});

describe('a phrase with one translation in the index', () => {
  it('scores a skill it matches exactly as when the phrase brings in several', () => {
    // The same number of skills and lengths either way; in the second, a second Chinese word for
    // "review" is held by another skill, so the phrase's translations are two terms, not one.
    const scoreOf = (other: string) => {
      const index = new SearchIndex();
      index.put(searchDocument({ name: 'cn-checklist', description: '评审清单。', body: '' }));
      index.put(searchDocument({ name: 'other', description: `${other}。`, body: '' }));
      index.put(searchDocument({ name: 'web-security', description: 'Security checklist.', body: '' }));
      const hits = index.search('review the security checklist', { limit: 5 });
      return { hit: hits.find((hit) => hit.name === 'cn-checklist'), names: hits.map((hit) => hit.name) };
    };
    const alone = scoreOf('审稿');
    const several = scoreOf('审查');
    expect(several.names).toContain('other');
    expect(alone.names).not.toContain('other');
    expect(alone.hit?.score).toBeGreaterThan(0);
    expect(alone.hit?.score).toBe(several.hit?.score);
  });
});
