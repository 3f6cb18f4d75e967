import { type AnalyzedWord, analyzeWords, isCjkTerm } from './analyze.js';
import { expand } from './expansion.js';
import type { Postings } from './postings.js';

/**
 * Which terms a request is searched with: its own words (or the closest known spelling of unknown
 * ones), then related words from the lexicon (expansion.ts). Related words in another writing system
 * than the request's are translations, grouped by the request's phrase that brought them in, so
 * that the ranking counts each phrase's translations once however many of them a skill holds.
 */

/** One term a request is searched with. */
export interface QueryTerm {
  /** The request's word (or, for a related word, the request's phrase that brought it in). */
  query: string;
  term: string;
  postings: Postings;
  boost: number;
  corrected: boolean;
  /** Not the request's word but one the lexicon relates to it: the skill's word. */
  related?: string;
  /**
   * Terms of one unit stand for one thing the request said. Every term is a unit of its own but the
   * translations one phrase of the request brings in ("审查", "评审", "代码审查" for "review"),
   * which share one: a skill scores the best of them, not their sum (SearchIndex.search).
   */
  unit: number;
  /**
   * A related word in another writing system than the request's (a Chinese word for an English
   * request, or an English one for a Chinese request): see SearchIndex.search for how little it
   * counts alone.
   */
  translation: boolean;
}

/** What the index answers about its terms. */
export interface TermSource {
  /** Slots numbered (replaced ones included until compaction, as document frequencies count them). */
  slots: number;
  postingsOf(term: string): Postings | undefined;
  /** The closest known spelling of an unknown word, if any. */
  closestSpelling(term: string): string | undefined;
}

/** Query terms past this many (the rarest are kept) add time and little else. */
const MAX_QUERY_TERMS = 48;

/** Related words from the lexicon searched for one request, at most (expansion.ts). */
const MAX_EXPANSION_TERMS = 32;

/** Related words held by more than this share of skills are not searched. */
const EXPANSION_MAX_SHARE = 0.2;

/** Unknown words of one request looked up for a close spelling (a paragraph can hold dozens). */
const MAX_CORRECTIONS = 8;

/** See withoutUbiquitous(). */
const UBIQUITOUS_SHARE = 0.8;

/** How much a corrected spelling counts against a word the index knows. */
const CORRECTED_BOOST = 0.8;

/** The request's terms, each once, with the first word that gave it. */
export function uniqueTerms(query: string): AnalyzedWord[] {
  const seen = new Set<string>();
  return analyzeWords(query).filter(({ term }) => {
    if (seen.has(term)) return false;
    seen.add(term);
    return true;
  });
}

/**
 * The terms `query` (whose unique terms are `words`) is searched with, in the order byUnit() gives.
 * `literal`: the request's own words only, no corrected spellings and no related words.
 */
export function queryTerms(
  words: readonly AnalyzedWord[],
  query: string,
  source: TermSource,
  literal = false,
): QueryTerm[] {
  const found: Omit<QueryTerm, 'unit' | 'translation'>[] = [];
  let corrections = 0;
  for (const { term, word } of words) {
    const postings = source.postingsOf(term);
    if (postings && postings.df > 0) {
      found.push({ query: word, term, postings, boost: 1, corrected: false });
      continue;
    }
    if (literal || corrections >= MAX_CORRECTIONS) continue;
    corrections += 1;
    const near = source.closestSpelling(term);
    if (near)
      found.push({
        query: word,
        term: near,
        postings: source.postingsOf(near)!,
        boost: CORRECTED_BOOST,
        corrected: true,
      });
  }
  const own =
    found.length <= MAX_QUERY_TERMS
      ? found
      : found.sort((x, y) => x.postings.df - y.postings.df).slice(0, MAX_QUERY_TERMS);
  const chosen: QueryTerm[] = own.map((term, unit) => ({ ...term, unit, translation: false }));
  if (literal) return byUnit(withoutUbiquitous(chosen, source.slots));
  // The writing systems the request is in: a related word in another one is a translation.
  const requestInCjk = words.some(({ term }) => isCjkTerm(term));
  const requestSpaced = words.some(({ term }) => !isCjkTerm(term));
  /** The unit of each phrase's translations. */
  const translationUnits = new Map<string, number>();
  let units = chosen.length;
  // The request's own words first; related words from the lexicon fill what room is left.
  const have = new Set([...words.map(({ term }) => term), ...chosen.map(({ term }) => term)]);
  let room = MAX_EXPANSION_TERMS;
  for (const { term, word, as, boost, cjk } of expand(query, have)) {
    if (room === 0) break;
    const postings = source.postingsOf(term);
    if (!postings || postings.df === 0) continue;
    // A related word most skills hold adds little at its lower weight, and its postings cost the most.
    // (Kept in small catalogues, as withoutUbiquitous keeps common words there.)
    if (source.slots >= 100 && postings.df > EXPANSION_MAX_SHARE * source.slots) continue;
    const translation = cjk ? !requestInCjk : !requestSpaced;
    let unit = translation ? translationUnits.get(word) : undefined;
    if (unit === undefined) {
      unit = units++;
      if (translation) translationUnits.set(word, unit);
    }
    chosen.push({ query: word, term, postings, boost, corrected: false, related: as, unit, translation });
    room -= 1;
  }
  return byUnit(withoutUbiquitous(chosen, source.slots));
}

/**
 * Rarest first: their short postings find the candidates, and the common words' long postings can
 * then often be read for those candidates alone (SearchIndex.search). A unit's terms stay together,
 * placed by its rarest.
 */
function byUnit(terms: QueryTerm[]): QueryTerm[] {
  const rarest = new Map<number, number>();
  for (const { unit, postings } of terms)
    rarest.set(unit, Math.min(rarest.get(unit) ?? Infinity, postings.df));
  return terms.sort(
    (x, y) => rarest.get(x.unit)! - rarest.get(y.unit)! || x.unit - y.unit || x.postings.df - y.postings.df,
  );
}

/**
 * The terms without those nearly every skill holds (in over ~80% of them): they tell skills apart by
 * almost nothing, and reading their postings would cost the most. Kept in small catalogues, where
 * a word every skill holds is still a fair answer.
 */
function withoutUbiquitous(terms: QueryTerm[], slots: number): QueryTerm[] {
  if (slots < 100) return terms;
  return terms.filter(({ postings }) => postings.df < UBIQUITOUS_SHARE * slots);
}

/**
 * The request's weight that coverage is measured against: every term's, but a phrase's translations
 * once (a skill can match at most the best of them).
 */
export function requestWeight(terms: readonly QueryTerm[], idfs: readonly number[]): number {
  let total = 0;
  const translations = new Map<number, number>();
  terms.forEach(({ unit, translation }, t) => {
    if (translation) translations.set(unit, Math.max(translations.get(unit) ?? 0, idfs[t]!));
    else total += idfs[t]!;
  });
  for (const weight of translations.values()) total += weight;
  return total;
}
