/**
 * The search index's terms outside the heap (src/search/term-dictionary.ts) against a Map doing the
 * same operations: any sequence of new terms, replaced words and postings answers alike, through
 * every growth of its arrays and table, for terms of any script.
 */
import { describe, expect, it } from 'vitest';
import { Postings } from '../../src/search/postings.js';
import { TermDictionary } from '../../src/search/term-dictionary.js';
import { seededRandom as random } from '../helpers/random.js';

/** Letters, CJK, an astral character (two code units) and digits: what the analyzer makes terms of. */
const ALPHABET = ['a', 'b', 'c', 'é', 'ß', '单', '细', '胞', '😀', '0', '7', '-'];

function termFrom(next: () => number): string {
  const length = 1 + Math.floor(next() * 9);
  let term = '';
  for (let i = 0; i < length; i++) term += ALPHABET[Math.floor(next() * ALPHABET.length)];
  return term;
}

describe('TermDictionary', () => {
  it('answers as a Map would over 15,000 operations, through every growth', () => {
    const next = random(32);
    const dictionary = new TermDictionary();
    const expected = new Map<string, Postings | number>();
    const order: string[] = [];
    for (let step = 0; step < 15_000; step++) {
      const term =
        next() < 0.3 && order.length > 0 ? order[Math.floor(next() * order.length)]! : termFrom(next);
      const value = next() < 0.7 ? Math.floor(next() * 2 ** 32) : Postings.of(Math.floor(next() * 2 ** 32));
      const isNew = !expected.has(term);
      // A new term's id is the next one; a known term keeps its id.
      expect(dictionary.set(term, value)).toBe(isNew ? order.length : order.indexOf(term));
      if (isNew) order.push(term);
      expected.set(term, value);
      const probe = termFrom(next);
      expect(dictionary.get(probe)).toBe(expected.get(probe));
    }
    expect(dictionary.size).toBe(expected.size);
    for (const [term, value] of expected) expect(dictionary.get(term)).toBe(value);
    // Trimmed to what it holds, it answers the same and still takes new terms.
    const before = dictionary.byteLength;
    dictionary.trim();
    expect(dictionary.byteLength).toBeLessThanOrEqual(before);
    for (const [term, value] of expected) expect(dictionary.get(term)).toBe(value);
    for (let more = 0; more < 50; more++) {
      const term = `new-${more}`;
      dictionary.set(term, more);
      order.push(term);
      expected.set(term, more);
    }
    for (const [term, value] of expected) expect(dictionary.get(term)).toBe(value);
    // In the order terms arrived, each with what was set last.
    expect([...dictionary.keys()]).toEqual(order);
    expect([...dictionary.values()]).toEqual(order.map((term) => expected.get(term)));
    const visited: [string, Postings | number][] = [];
    dictionary.forEach((value, term) => {
      visited.push([term, value]);
    });
    expect(visited).toEqual(order.map((term) => [term, expected.get(term)]));
  });

  it('tells apart terms that share a prefix, a hash bucket or a length, and the largest words', () => {
    const dictionary = new TermDictionary();
    const terms = ['', 'a', 'aa', 'ab', 'ba', 'a\u0000', '\uffff', '\ud83d', '😀', 'x'.repeat(300)];
    terms.forEach((term, i) => {
      dictionary.set(term, i === 0 ? 0xffffffff : i);
    });
    for (const [i, term] of terms.entries()) expect(dictionary.get(term)).toBe(i === 0 ? 0xffffffff : i);
    expect(dictionary.get('b')).toBeUndefined();
    expect(dictionary.get('a\u0001')).toBeUndefined();
    // A term moved from postings back to its one word, and the reverse.
    const postings = Postings.of(5);
    dictionary.set('a', postings);
    expect(dictionary.get('a')).toBe(postings);
    dictionary.set('a', 9);
    expect(dictionary.get('a')).toBe(9);
    expect(dictionary.size).toBe(terms.length);
    expect(dictionary.byteLength).toBeGreaterThan(0);
  });
});
