import { stemmer } from 'stemmer';
import { eng as englishStopwords } from 'stopword';

/**
 * Text to search terms, the same way for skills and for requests.
 *
 * - Latin and other spaced scripts: runs of letters and digits, lower-cased, English stop words
 *   dropped, stemmed (Porter), so "testing", "tests" and "tested" meet.
 * - Chinese, Japanese and Korean have no spaces: each run is cut into overlapping character pairs
 *   ("单细胞" gives "单细", "细胞"), the usual way to index them without a dictionary.
 */

/** Words a request is full of that say nothing about which skill fits it. */
const REQUEST_WORDS = [
  'why',
  'how',
  'what',
  'which',
  'when',
  'where',
  'who',
  'whose',
  'please',
  'help',
  'want',
  'need',
  'would',
  'like',
  'could',
  'can',
  'let',
  'lets',
  'us',
  'me',
  'my',
  'our',
  'we',
  'you',
  'your',
  'i',
  'im',
  'ive',
  'just',
  'also',
  'some',
  'something',
  'thing',
  'things',
  'stuff',
  'way',
  'really',
  'actually',
  'maybe',
  'one',
  'ones',
  'every',
  'each',
  'don',
  'doesn',
  'isn',
  'll',
  've',
  're',
  's',
  't',
  'd',
  'm',
];

const STOPWORDS = new Set([...englishStopwords, ...REQUEST_WORDS]);

const TOKEN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu;
const CJK = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Terms of `text` in order, repeats kept (term frequencies count them). */
export function analyze(text: string): string[] {
  return analyzeWords(text).map((found) => found.term);
}

/** A term and the word of the text it came from (for saying why a skill matched). */
export interface AnalyzedWord {
  term: string;
  word: string;
}

export function analyzeWords(text: string): AnalyzedWord[] {
  const found: AnalyzedWord[] = [];
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) {
    const token = match[0];
    if (CJK.test(token)) {
      for (const pair of cjkPairs(token)) found.push({ term: pair, word: pair });
      continue;
    }
    const term = wordTerm(token);
    if (term !== undefined) found.push({ term, word: token });
  }
  return found;
}

/** The term one lower-cased word stands for, or undefined for a stop word. */
export function wordTerm(word: string): string | undefined {
  if (STOPWORDS.has(word)) return undefined;
  // Long numbers (ids, counts, timestamps) tell what a skill is for only by accident, and each would
  // be a term of its own.
  if (word.length > 64 || /^\d{5,}$/.test(word)) return undefined;
  if (word.length <= 2 || /\d/.test(word)) return word;
  return stemmer(word);
}

function cjkPairs(run: string): string[] {
  const chars = [...run];
  if (chars.length === 1) return chars;
  const pairs: string[] = [];
  for (let at = 0; at + 1 < chars.length; at++) pairs.push(chars[at]! + chars[at + 1]!);
  return pairs;
}

/** Whether a term came from Chinese, Japanese or Korean text (no typo tolerance: pairs are exact). */
export function isCjkTerm(term: string): boolean {
  return CJK.test(term);
}

/** Headings and the rest of a Markdown body, with fenced code kept in the rest. */
export function splitBody(body: string): { headings: string; text: string } {
  const headings: string[] = [];
  const text: string[] = [];
  let fenced = false;
  for (const line of body.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^\s{0,3}#{1,6}\s+(.*)$/.exec(line);
    if (heading) headings.push(heading[1]!);
    else text.push(line);
  }
  return { headings: headings.join('\n'), text: text.join('\n') };
}
