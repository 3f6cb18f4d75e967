import { analyze, splitBody } from './analyze.js';
import { extendTermHash, TERM_HASH_START } from './term-dictionary.js';

/** The fields a skill is searched by, in the order their term counts are packed (search-index.ts). */
export const FIELDS = ['name', 'description', 'headings', 'body'] as const;
export type Field = (typeof FIELDS)[number];

/** How many times each term occurs in each field of one skill. */
export type FieldTerms = Record<Field, Map<string, number>>;

/** What the index holds of one skill: its name and the counted terms of its fields. */
export interface SearchDocument {
  name: string;
  terms: FieldTerms;
}

/**
 * Body words past this many are not indexed: the opening of a body says what the skill is for, and a
 * bound keeps one huge body from costing the index more than a few skills.
 */
export const BODY_TERM_LIMIT = 4000;

/** Distinct body terms kept per skill (the most frequent): bounds the index's memory per skill. */
export const BODY_DISTINCT_LIMIT = 400;

export interface SearchableSkill {
  name: string;
  description: string;
  body: string;
}

/** Analyses one skill version for the index (pure; the same text always gives the same document). */
export function searchDocument(skill: SearchableSkill): SearchDocument {
  const { headings, text } = splitBody(skill.body);
  const body = analyze(text);
  if (body.length > BODY_TERM_LIMIT) body.length = BODY_TERM_LIMIT;
  return {
    name: skill.name,
    terms: {
      name: counted(analyze(skill.name.replaceAll('-', ' '))),
      description: counted(analyze(skill.description)),
      headings: counted(analyze(headings)),
      body: strongest(counted(body), BODY_DISTINCT_LIMIT),
    },
  };
}

/** The `limit` most frequent terms (the first seen among equals), in order of first occurrence. */
function strongest(counts: Map<string, number>, limit: number): Map<string, number> {
  if (counts.size <= limit) return counts;
  const order = [...counts.keys()];
  const rank = new Map(order.map((term, at) => [term, at]));
  const kept = new Set(
    order.sort((a, b) => counts.get(b)! - counts.get(a)! || rank.get(a)! - rank.get(b)!).slice(0, limit),
  );
  return new Map([...counts].filter(([term]) => kept.has(term)));
}

function counted(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/**
 * Bumped whenever analyze() or searchDocument() would give other terms for the same text: stored
 * terms of another version are analysed again from the version's text when the index reads them.
 */
export const ANALYZER_VERSION = 2;

/**
 * The stored form of a document's term counts: the analyzer version on the first line, then one line
 * per field of `term:count` pairs separated by spaces (`:1` left out; terms never hold spaces or
 * colons). Compact to keep, quick to read back at start.
 */
export function encodeTerms(terms: FieldTerms): string {
  return `${ANALYZER_VERSION}\n${encodeFields(terms)}`;
}

/**
 * The term counts of a stored form, or undefined when another analyzer version made it. Read by
 * forEachStoredTerm, the one reader of the stored form the index builds from.
 */
export function decodeTerms(encoded: string): FieldTerms | undefined {
  if (!isCurrentTerms(encoded)) return undefined;
  const terms = Object.fromEntries(FIELDS.map((field) => [field, new Map<string, number>()])) as FieldTerms;
  forEachStoredTerm(encoded, (field, start, end, _hash, count) => {
    terms[FIELDS[field]!].set(encoded.slice(start, end), count);
  });
  return terms;
}

/** A field's term and its count, as put() takes them (field is the index in FIELDS). */
export type TermVisitor = (field: number, term: string, count: number) => void;

/** Whether a stored form was made by this analyzer version (else the text is analysed again). */
export function isCurrentTerms(encoded: string): boolean {
  return encoded.startsWith(`${ANALYZER_VERSION}\n`);
}

/**
 * Visits each (field, term, count) of a current stored form where it stands: the term is `stored` from
 * `start` to `end`, with its FNV-1a hash (term-dictionary.ts), so a large build makes no string per
 * term. One pass over each pair finds its end, its last colon and the term's hash.
 */
export function forEachStoredTerm(
  stored: string,
  visit: (field: number, start: number, end: number, hash: number, count: number) => void,
): void {
  const end = stored.length;
  let field = 0;
  let at = stored.indexOf('\n') + 1;
  while (at < end && field < FIELDS.length) {
    let pairEnd = at;
    let colon = -1;
    let hash = TERM_HASH_START;
    let termHash = 0;
    for (; pairEnd < end; pairEnd++) {
      const code = stored.charCodeAt(pairEnd);
      if (code === SPACE || code === NEWLINE) break;
      if (code === COLON) {
        colon = pairEnd;
        termHash = hash;
      }
      hash = extendTermHash(hash, code);
    }
    if (pairEnd > at) {
      if (colon < 0) visit(field, at, pairEnd, hash >>> 0, 1);
      else visit(field, at, colon, termHash >>> 0, storedCount(stored, colon + 1, pairEnd));
    }
    if (stored.charCodeAt(pairEnd) === NEWLINE) field++;
    at = pairEnd + 1;
  }
}

const SPACE = 32;
const NEWLINE = 10;
const COLON = 58;

/** A stored count (the digits from `start` to `end`): 1 when not a positive whole number. */
function storedCount(stored: string, start: number, end: number): number {
  let count = 0;
  for (let at = start; at < end; at++) {
    const digit = stored.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) return 1;
    count = count * 10 + digit;
  }
  return count || 1;
}

function encodeFields(terms: FieldTerms): string {
  return FIELDS.map((field) => {
    const pairs: string[] = [];
    for (const [term, count] of terms[field]) pairs.push(count === 1 ? term : `${term}:${count}`);
    return pairs.join(' ');
  }).join('\n');
}
