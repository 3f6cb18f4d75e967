/**
 * Postings held dense (a term more than half of a large catalogue's skills hold: counts by slot) must
 * answer exactly as the list they replace: the same postings, the same scores, through growth,
 * replacement and compaction.
 */
import { describe, expect, it } from 'vitest';
import { type SearchableSkill, searchDocument } from '../../src/search/document.js';
import { COUNT_BITS, DENSE_FROM_SLOTS, Postings } from '../../src/search/postings.js';
import { SearchIndex } from '../../src/search/search-index.js';

/** A fixed pseudo-random sequence, so a failure can be replayed. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state >>> 8;
  };
}

function postingsOf(postings: Postings): [number, number][] {
  const seen: [number, number][] = [];
  postings.forEach((slot, packed) => {
    seen.push([slot, packed]);
  });
  return seen;
}

describe('postings held dense', () => {
  it('hold the same postings as a list, found by slot, once most slots have the term', () => {
    const next = sequence(7);
    const postings = new Postings();
    const expected = new Map<number, number>();
    const slots = DENSE_FROM_SLOTS * 3;
    for (let slot = 0; slot < slots; slot++) {
      if (next() % 10 >= 7) continue;
      const packed = 1 + (next() % ((1 << COUNT_BITS) - 1));
      postings.push(slot, packed);
      expected.set(slot, packed);
    }
    postings.trim(slots);
    expect(postings.dense).toBeDefined();
    expect(postings.df).toBe(expected.size);
    expect(postingsOf(postings)).toEqual([...expected]);
    for (let slot = 0; slot < slots + 10; slot++) expect(postings.find(slot)).toBe(expected.get(slot) ?? 0);
    // Two bytes a slot (and room to grow) rather than four a posting.
    expect(postings.dense!.byteLength).toBeLessThan(expected.size * 4);

    // Growing past the room kept, then back to a list once few of many more slots hold it.
    postings.push(slots * 2, 5);
    expected.set(slots * 2, 5);
    expect(postings.find(slots * 2)).toBe(5);
    postings.trim(slots * 8);
    expect(postings.dense).toBeUndefined();
    expect(postingsOf(postings)).toEqual([...expected]);
    for (const [slot, packed] of expected) expect(postings.find(slot)).toBe(packed);
  });

  it('hold one byte a slot while the term has few combinations of counts, two once it has more', () => {
    const next = sequence(3);
    const postings = new Postings();
    const expected = new Map<number, number>();
    const slots = DENSE_FROM_SLOTS * 2;
    // 255 combinations: the most a byte's codes can name.
    const combinations = Array.from({ length: 255 }, (_, i) => 1 + ((i * 37) % ((1 << COUNT_BITS) - 1)));
    for (let slot = 0; slot < slots; slot++) {
      if (next() % 10 >= 8) continue;
      const packed = combinations[next() % combinations.length]!;
      postings.push(slot, packed);
      expected.set(slot, packed);
    }
    postings.trim(slots);
    const dense = postings.dense!;
    expect(dense.palette).toBeDefined();
    expect(dense.values.BYTES_PER_ELEMENT).toBe(1);
    expect(postingsOf(postings)).toEqual([...expected]);
    for (let slot = 0; slot < slots + 3; slot++) expect(postings.find(slot)).toBe(expected.get(slot) ?? 0);

    // A skill's second field joins its counts (a combination already held), then grows past the end.
    const joined = [...expected.keys()].at(-1)!;
    const before = expected.get(joined)!;
    postings.add(joined, before);
    expect(postings.find(joined)).toBe(before);
    postings.push(slots + 5, combinations[0]!);
    expected.set(slots + 5, combinations[0]!);
    expect(postings.dense!.palette).toBeDefined();

    // A 256th combination widens every slot to its counts, and nothing changes but the width.
    const unseen = (1 << COUNT_BITS) - 1;
    expect(combinations).not.toContain(unseen);
    postings.push(slots + 9, unseen);
    expected.set(slots + 9, unseen);
    expect(postings.dense!.palette).toBeUndefined();
    expect(postings.dense!.values.BYTES_PER_ELEMENT).toBe(2);
    expect(postingsOf(postings)).toEqual([...expected]);
    for (let slot = 0; slot < slots + 12; slot++) expect(postings.find(slot)).toBe(expected.get(slot) ?? 0);
  });

  it('stay a list in a small catalogue, or for a term fewer than half the slots hold', () => {
    const small = new Postings();
    for (let slot = 0; slot < 100; slot++) small.push(slot, 1);
    small.trim(100);
    expect(small.dense).toBeUndefined();
    const rare = new Postings();
    for (let slot = 0; slot < DENSE_FROM_SLOTS * 2; slot += 3) rare.push(slot, 1);
    rare.trim(DENSE_FROM_SLOTS * 2);
    expect(rare.dense).toBeUndefined();
  });
});

describe('a search over a term held dense', () => {
  /** 6,000 skills: `harbor` in the first 4,000 bodies (a few in descriptions), `quay` in 12 of them. */
  function catalogue(): SearchableSkill[] {
    const next = sequence(11);
    return Array.from({ length: 6_000 }, (_, i) => {
      const harbor = i < 4_000 ? ' harbor'.repeat(1 + (next() % 4)) : '';
      const quay = i % 500 === 3 ? ' quay' : '';
      return {
        name: `skill-${i}`,
        description: `Handles task ${i % 97}${i % 50 === 0 ? ' at the harbor' : ''}.`,
        body: `Steps for the work${harbor}${quay} and more words ${i % 13}.`,
      };
    });
  }

  function hits(index: SearchIndex, query: string, limit: number) {
    return index.search(query, { limit }).map(({ name, score, matched }) => ({ name, score, matched }));
  }

  it('ranks and scores exactly as the list it replaced, pruned or read whole', () => {
    const index = new SearchIndex();
    // Every skill holding `harbor` comes first, so its postings stay a list while they are put.
    for (const skill of catalogue()) index.put(searchDocument(skill));
    expect(index.postingsOf('harbor')!.dense).toBeUndefined();
    const queries = [
      ['quay harbor', 5],
      ['harbor', 20],
      ['harbor task 12', 10],
      ['harbour quay', 8],
    ] as const;
    const asList = queries.map(([query, limit]) => hits(index, query, limit));
    index.trim();
    expect(index.postingsOf('harbor')!.dense).toBeDefined();
    const asDense = queries.map(([query, limit]) => hits(index, query, limit));
    expect(asDense).toEqual(asList);
    // The skills with the rare word first, each with both words where it holds both.
    expect(asDense[0]!.map((hit) => Number(hit.name.slice('skill-'.length)) % 500)).toEqual([3, 3, 3, 3, 3]);
    expect(asDense[0]!.some((hit) => hit.matched.length === 2)).toBe(true);
  });

  it('scores a term with more combinations of counts than a byte names exactly as its list', () => {
    // `wharf` in two skills of three, its counts in description, headings and body varying together: over
    // 256 combinations, so its dense counts are held two bytes a slot.
    const skills = Array.from({ length: 6_000 }, (_, i) => {
      const wharf = (times: number) => ' wharf'.repeat(times);
      const held = i % 3 !== 0;
      return {
        name: `skill-${i}`,
        description: `Moves cargo${held ? wharf(i % 5) : ''} for task ${i % 89}.`,
        body: `# Dock${held ? wharf((i >> 2) % 3) : ''}\n\nSteps${held ? wharf(1 + ((i >> 4) % 24)) : ''} and lines ${i % 17}.`,
      };
    });
    const index = new SearchIndex();
    for (const skill of skills) index.put(searchDocument(skill));
    const queries = [
      ['wharf', 25],
      ['wharf task 12', 10],
      ['dock wharf cargo', 15],
    ] as const;
    const asList = queries.map(([query, limit]) => hits(index, query, limit));
    expect(asList.map((found) => found.length)).toEqual(queries.map(([, limit]) => limit));
    index.trim();
    const dense = index.postingsOf('wharf')!.dense!;
    expect(dense.palette).toBeUndefined();
    expect(queries.map(([query, limit]) => hits(index, query, limit))).toEqual(asList);
  });

  it('keeps answering after replacements compact the index', () => {
    const skills = catalogue();
    const index = new SearchIndex();
    for (const skill of skills) index.put(searchDocument(skill));
    index.trim();
    const before = hits(index, 'quay harbor', 10).map((hit) => hit.name);
    // Half the skills replaced by themselves: dead slots past a quarter of all compact the index.
    for (const skill of skills.slice(0, 3_000)) index.put(searchDocument(skill));
    expect(index.stats().slots).toBeLessThan(9_000);
    expect(index.postingsOf('harbor')!.dense).toBeDefined();
    expect(hits(index, 'quay harbor', 10).map((hit) => hit.name)).toEqual(before);
    index.remove('skill-3');
    const after = hits(index, 'quay harbor', 10).map((hit) => hit.name);
    expect(after).not.toContain('skill-3');
    expect(after.slice(0, 9)).toEqual(before.filter((name) => name !== 'skill-3'));
  });
});

describe('a term in several fields of one skill', () => {
  it('is one posting with the counts of every field, in a list, held as one word, or held dense', () => {
    const index = new SearchIndex();
    const slots = DENSE_FROM_SLOTS + 10;
    for (let i = 0; i < slots; i++) {
      // "common" in every skill's name, description and body (dense once trimmed); "rare" in the
      // description and body of every 500th (a list); "lone" in two fields of one skill (one word).
      const rare = i % 500 === 0 ? ' rare' : '';
      const lone = i === 7 ? ' lone' : '';
      index.put(
        searchDocument({
          name: `common-${i}`,
          description: `common work${rare}${lone}`,
          body: `common words${rare}${lone}`,
        }),
      );
    }
    index.trim();
    const common = index.postingsOf('common')!;
    expect(common.dense).toBeDefined();
    expect(common.df).toBe(slots);
    const rare = index.postingsOf('rare')!;
    expect(rare.dense).toBeUndefined();
    expect(rare.df).toBe(Math.ceil(slots / 500));
    expect(index.postingsOf('lone')!.df).toBe(1);
    const [hit] = index.search('lone', { limit: 1 });
    expect(hit!.matched[0]!.fields).toEqual(['description', 'body']);
    const rareHits = index.search('rare', { limit: 50 });
    expect(rareHits).toHaveLength(Math.ceil(slots / 500));
    for (const found of rareHits) expect(found.matched[0]!.fields).toEqual(['description', 'body']);
    // Added after the build, to a term held dense: still one posting.
    index.put(searchDocument({ name: 'common-new', description: 'common', body: 'common' }));
    expect(index.postingsOf('common')!.df).toBe(slots + 1);
    // (Too common to be searched for: its counts are read from the postings.)
    const fieldsOf = (packed: number) => [packed & 1, (packed >>> 1) & 7, (packed >>> 4) & 3, packed >>> 6];
    expect(fieldsOf(index.postingsOf('common')!.find(0))).toEqual([1, 1, 0, 1]);
    expect(fieldsOf(index.postingsOf('common')!.find(slots))).toEqual([1, 1, 0, 1]);
  });
});
