import { stemmer } from 'stemmer';
import { type AnalyzedWord, analyzeWords, isCjkTerm, wordTerm } from './analyze.js';
import { LEXICON } from './lexicon.js';

/**
 * Query expansion from the lexicon: the phrases of a request that belong to a group bring in the
 * group's other phrases as extra search terms, weighted below the request's own words, so "look over
 * my Playwright specs" also searches for "review" and "audit" while a skill that uses the request's
 * own words still ranks first among equals.
 */

/** One term the request did not contain, added because a phrase of it belongs to a lexicon group. */
export interface Expansion {
  term: string;
  /** The request's phrase that brought it in. */
  word: string;
  /** The lexicon's word for the term, as a person reads it (`term` is a stem). */
  as: string;
  boost: number;
  /** Whether the term is of Chinese, Japanese or Korean text (isCjkTerm): known once per lexicon. */
  cjk: boolean;
}

/** A term a lexicon group's phrases stand for in the index. */
interface LexiconTerm extends AnalyzedWord {
  cjk: boolean;
}

/** How much an expansion term counts against one of the request's own words. */
export const EXPANSION_BOOST = 0.35;

/** Longest phrase of a request looked up, in words. */
const MAX_PHRASE_WORDS = 3;

interface Compiled {
  /** Latin-script phrases by their stemmed words (stop words kept), space-joined: group indexes. */
  phrases: Map<string, number[]>;
  /** Chinese (and other unspaced) phrases, found in a request as substrings. */
  unspaced: { phrase: string; groups: number[] }[];
  /** Per group, the terms its phrases stand for in the index. */
  targets: LexiconTerm[][];
}

let compiled: Compiled | undefined;

const WORD = /[\p{L}\p{N}]+/gu;

function words(text: string): string[] {
  return [...text.normalize('NFKC').toLowerCase().matchAll(WORD)].map((match) => match[0]);
}

/** A word as phrases are matched: stemmed, but stop words kept ("go over" is not "go"). */
function phraseStem(word: string): string {
  return word.length <= 2 || /\d/.test(word) ? word : stemmer(word);
}

function compile(): Compiled {
  const phrases = new Map<string, number[]>();
  const unspaced = new Map<string, number[]>();
  const targets: LexiconTerm[][] = [];
  LEXICON.forEach((line, group) => {
    const terms = new Map<string, LexiconTerm>();
    for (const phrase of line.split('|')) {
      const text = phrase.trim().toLowerCase();
      if (text === '') continue;
      const all = words(text);
      if (isCjkTerm(text)) {
        unspaced.set(text, [...(unspaced.get(text) ?? []), group]);
      } else {
        const key = all.map(phraseStem).join(' ');
        phrases.set(key, [...(phrases.get(key) ?? []), group]);
        // A phrase with a stop word in it means something its other words alone do not ("go over"):
        // it is recognised in requests but adds no terms.
        if (all.some((word) => wordTerm(word) === undefined)) continue;
      }
      for (const found of analyzeWords(text)) {
        if (!terms.has(found.term)) terms.set(found.term, { ...found, cjk: isCjkTerm(found.term) });
      }
    }
    targets.push([...terms.values()]);
  });
  return {
    phrases,
    unspaced: [...unspaced].map(([phrase, groups]) => ({ phrase, groups })),
    targets,
  };
}

/** The expansion terms of a request (none of them among `asked`, the request's own terms). */
export function expand(query: string, asked: ReadonlySet<string>): Expansion[] {
  compiled ??= compile();
  const { phrases, unspaced, targets } = compiled;
  const found = new Map<number, string>();
  const raw = words(query);
  const stems = raw.map(phraseStem);
  for (let at = 0; at < stems.length; at++) {
    for (let length = 1; length <= MAX_PHRASE_WORDS && at + length <= stems.length; length++) {
      const groups = phrases.get(stems.slice(at, at + length).join(' '));
      if (!groups) continue;
      const phrase = raw.slice(at, at + length).join(' ');
      for (const group of groups) if (!found.has(group)) found.set(group, phrase);
    }
  }
  const text = query.normalize('NFKC').toLowerCase();
  for (const { phrase, groups } of unspaced) {
    if (!text.includes(phrase)) continue;
    for (const group of groups) if (!found.has(group)) found.set(group, phrase);
  }
  const expansions = new Map<string, Expansion>();
  for (const [group, phrase] of found) {
    for (const { term, word, cjk } of targets[group]!) {
      if (asked.has(term) || expansions.has(term)) continue;
      expansions.set(term, { term, word: phrase, as: word, boost: EXPANSION_BOOST, cjk });
    }
  }
  return [...expansions.values()];
}
