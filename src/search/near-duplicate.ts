import { stemmer } from 'stemmer';
import { analyzeWords, isCjkTerm, wordTerm } from './analyze.js';
import { LEXICON } from './lexicon.js';

/**
 * Whether two skill descriptions describe the same job (the shadowing check at publish,
 * src/services/shadowing.ts): agents pick a skill by its description, and two that say the same thing
 * in other words leave them guessing.
 *
 * A description becomes a set of weighted terms: the search's stemmed words (analyze.ts) with British
 * spellings made American, phrases of the lexicon (lexicon.ts) and of DESCRIPTION_SYNONYMS read as
 * one term, the words that say how to invoke a skill rather than what it does ("Use when the user
 * asks...") dropped, and words every description is full of ("create", "files", "tool") counted half.
 * Two sets are compared by a weighted cosine in which a term matches the same term fully, a synonym
 * (a word of the same group) or a spelling variant (one stem the start of the other) at a discount;
 * a word that only says again what the other side matched already is left out, and a short
 * description's differing words count for more (PRIOR_WEIGHT). Skills whose descriptions name each
 * other are told apart by their authors already (namesEachOther).
 *
 * Rewordings keep nearly every word of the job, in other words and order: they score high. Skills that
 * share a topic share its nouns ("PDF", "PostgreSQL") but not what they do with them: the verbs and
 * objects that differ pull the score down. test/fixtures/shadowing-pairs.json holds both kinds; the
 * threshold sits between them.
 */

/** At or above this a pair is a near-duplicate (see test/search/near-duplicate.test.ts for the pairs). */
export const NEAR_DUPLICATE_THRESHOLD = 0.49;

/** What a synonym counts against the same word (DESCRIPTION_SYNONYMS: words that mean the same). */
const SYNONYM_MATCH = 0.85;

/**
 * What two words of one lexicon group count (lexicon.ts): its groups are built for search, where a
 * request for "restore" should find a backup skill, so many hold a topic's words rather than one
 * meaning ("backup" and "restore", "slow" and "optimize"); a topic is what merely related skills share.
 */
const RELATED_MATCH = 0.4;

/** What a spelling variant counts (one stem the start of the other: "summar" and "summari"). */
const VARIANT_MATCH = 0.9;

/**
 * What a side with words the other lacks is held to say beyond what it shows: a description is a
 * sample of what a skill does, and a short one's differing word is likelier to be the job itself
 * ("Write unit tests for a Go package" and "Write benchmarks for a Go package" differ in one word of
 * four, and it is the one that matters). Added to the side's weight, up to as much as it leaves
 * unmatched (a full match keeps 1).
 */
const PRIOR_WEIGHT = 2;

/** Shortest stem that matches a longer one by its start (shorter ones are other words: "form"). */
const VARIANT_MIN_LENGTH = 5;

/**
 * Words that mean the same in descriptions: what skill authors swap when they reword. Same format as
 * LEXICON; these count as synonyms, and a description that says one thing twice in them ("validate
 * k8s manifests, check Kubernetes manifests") is not held to have said two.
 */
const DESCRIPTION_SYNONYMS: readonly string[] = [
  'create|make|build|generate|produce|author|write|draft|compose|craft|draw',
  'edit|modify|change|alter|adjust|revise|tweak',
  'analyze|analysis|examine|inspect|investigate|interpret|assess',
  'explain|describe|clarify|walk through',
  'find|detect|identify|spot|locate|discover|uncover|catch',
  'remove|delete|drop|strip|prune|eliminate',
  'check|verify|validate|ensure|audit|scan',
  'suggest|propose|recommend|advise',
  'fix|repair|resolve|patch|debug|troubleshoot|diagnose',
  'convert|turn|transform|turn into',
  'summary|summarize|recap|overview|digest',
  'problem|issue|error|mistake|flaw',
  'diff|changes|changeset',
  'spreadsheet|workbook|excel|xlsx|sheet',
  'slides|slide deck|deck|presentation|powerpoint|pptx',
  'document|documentation|docs',
  'image|picture|photo',
  'web|website|site|web page|webpage',
  'translate|translation|localize|localization',
  'transcribe|transcription|transcript|speech to text',
  'repository|repo|codebase',
  'script|program',
  'pr|pull request|merge request',
  'ci|continuous integration|github actions',
  'setup|set up|configure|configuration',
  'javascript|js',
  'typescript|ts',
  'e2e|end to end',
  'k8s|kubernetes',
  'flaky|unstable|brittle|intermittent|nondeterministic',
  'environment|env',
  'previous|last|prior',
  'rotate|replace|renew',
  'hot spot|hotspot|bottleneck',
  'detail|details|information|info',
  'security|insecure|unsafe',
  'unused|never used|not used|dead code',
  'experiment|a b test|ab test|split test',
];

/** Words that say how a skill is invoked, not what it does: left out. */
const BOILERPLATE = (
  'use uses used using user users ask asks asked asking request requests requested trigger triggers ' +
  'triggered mention mentions mentioned say says claude codex gemini cursor proactively whenever ' +
  'always invoke invoked etc eg e g ie include includes including such various also ' +
  // Function words the stop word list lacks.
  'whether within without across via per among upon onto toward towards unless until whose either ' +
  'neither every others several less least few able even yet though although however thus therefore ' +
  'instead rather during'
).split(' ');

/** Words nearly every description holds: they count half. */
const GENERIC = (
  'skill skills file files data code tool tools toolkit work working task tasks project projects ' +
  'support supports help helps provide provides guide guidance best practice practices pattern ' +
  'patterns comprehensive expert master professional advanced modern complete full production ' +
  'quality effective simple different specific new existing process handle manage management ' +
  'approach system systems ready based multiple common custom create make build generate write ' +
  'produce add run list show read look get take keep put'
).split(' ');

const BOILERPLATE_WEIGHT = 0;
const GENERIC_WEIGHT = 0.5;

/** The same runs analyze.ts cuts text into: CJK script runs apart from other letters and digits. */
const TOKEN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu;

/**
 * Chinese, Japanese and Korean characters that join words rather than name things (particles, "of",
 * "and", "to", "for"): a character pair holding one spans two words, and a rewording changes them freely.
 */
const CJK_FUNCTION_CHARACTERS = new Set([
  ...'的了和与及或是为将把被对从到其并等之以而由于向在中の을를이가은는에와과もをにはがでとや',
]);

/** Longest phrase looked up, in words. */
const MAX_PHRASE_WORDS = 3;

/** A description as compared: each term once, with its weight, and the sum of the weights. */
export interface DescriptionTerms {
  weights: ReadonlyMap<string, number>;
  total: number;
  /** The terms with what comparing them needs, looked up once (see relation). */
  entries: readonly TermEntry[];
  /** The terms another description's term may be related to, by what relates them (see candidates). */
  index: TermIndex;
}

interface TermIndex {
  byTerm: Map<string, TermEntry>;
  byGroup: Map<number, TermEntry[]>;
  /** Words and phrases of VARIANT_MIN_LENGTH or more by their first VARIANT_MIN_LENGTH characters. */
  byStart: Map<string, TermEntry[]>;
  /** Phrases by each of their words. */
  byPhraseWord: Map<string, TermEntry[]>;
}

interface TermEntry {
  term: string;
  weight: number;
  /** The groups it belongs to (LEXICON's by index, then DESCRIPTION_SYNONYMS'), if any. */
  groups: readonly number[] | undefined;
  /** A phrase's words (stemmed), for matching one of them alone. */
  words: readonly string[] | undefined;
  /** Whether a spelling variant may match it: a single word of another script than CJK. */
  word: boolean;
}

interface Vocabulary {
  /** Per single term, the groups it belongs to: LEXICON's by index, then DESCRIPTION_SYNONYMS'. */
  groups: Map<string, number[]>;
  /** Phrases of two or three words by their stemmed words (stop words kept), space-joined: groups. */
  phrases: Map<string, number[]>;
  /** The term a phrase stands for: its words run together when that is a known word ("back up"). */
  phraseTerms: Map<string, string>;
  /** The first words of phrases (most words start none: no phrase is looked up after them). */
  phraseStarts: Set<string>;
  /** Per term, its weight when not 1. */
  weights: Map<string, number>;
}

let vocabulary: Vocabulary | undefined;

/** "analyse" and "analyze", "optimise" and "optimize", "colour" and "color" meet before stemming. */
function americanized(word: string): string {
  if (word.length >= 7) {
    const replaced = word.replace(/(is|ys)(e|es|ed|ing|ation|ations|er|ers)$/, (_, s: string, end: string) =>
      s === 'is' ? `iz${end}` : `yz${end}`,
    );
    if (replaced !== word) return replaced;
  }
  return word.replace(/^(colo|behavio|favo|hono|labo|flavo)ur/, '$1r');
}

/** A word as phrases are keyed: stemmed, stop words kept ("set up" is not "set"). */
function phraseKey(word: string): string {
  const plain = americanized(word);
  return plain.length <= 2 || /\d/.test(plain) ? plain : stemmer(plain);
}

/** The term of a word, or undefined for a stop word or a lone letter ("A/B" leaves "b"). */
function termOf(word: string): string | undefined {
  if (word.length === 1 && !/\d/.test(word)) return undefined;
  return wordTerm(americanized(word));
}

function words(text: string): string[] {
  return [...text.normalize('NFKC').toLowerCase().matchAll(TOKEN)].map((match) => match[0]);
}

function add(map: Map<string, number[]>, key: string, group: number): void {
  const held = map.get(key);
  if (!held) map.set(key, [group]);
  else if (!held.includes(group)) held.push(group);
}

function compile(): Vocabulary {
  const groups = new Map<string, number[]>();
  const phrases = new Map<string, number[]>();
  const phraseWords = new Map<string, string[]>();
  [...LEXICON, ...DESCRIPTION_SYNONYMS].forEach((line, group) => {
    for (const phrase of line.split('|')) {
      const found = words(phrase.trim());
      if (found.length === 1) {
        const word = found[0]!;
        // A CJK phrase of two characters is one term (analyze.ts cuts CJK runs into pairs).
        const term = isCjkTerm(word) ? ([...word].length === 2 ? word : undefined) : termOf(word);
        if (term !== undefined) add(groups, term, group);
      } else if (found.length <= MAX_PHRASE_WORDS && !found.some((word) => isCjkTerm(word))) {
        const key = found.map(phraseKey).join(' ');
        add(phrases, key, group);
        phraseWords.set(key, found);
      }
    }
  });
  const phraseTerms = new Map<string, string>();
  const phraseStarts = new Set<string>();
  for (const [key, found] of phraseWords) {
    const joined = termOf(found.join(''));
    phraseTerms.set(key, joined !== undefined && groups.has(joined) ? joined : key);
    phraseStarts.add(key.slice(0, key.indexOf(' ')));
  }
  const weights = new Map<string, number>();
  for (const word of GENERIC) {
    const term = termOf(word);
    if (term !== undefined) weights.set(term, GENERIC_WEIGHT);
  }
  for (const word of BOILERPLATE) {
    const term = termOf(word);
    if (term !== undefined) weights.set(term, BOILERPLATE_WEIGHT);
  }
  return { groups, phrases, phraseTerms, phraseStarts, weights };
}

/** Words as phrases key them and as terms, by word: descriptions repeat words, stemming costs. */
const analyzed = new Map<string, { key: string; term: string | undefined }>();

/** Words kept analysed at most (then forgotten at once: a cache, never a leak). */
const MAX_ANALYZED = 50_000;

function unitOf(word: string): { key: string; term: string | undefined } {
  let unit = analyzed.get(word);
  if (unit === undefined) {
    if (analyzed.size >= MAX_ANALYZED) analyzed.clear();
    unit = { key: phraseKey(word), term: termOf(word) };
    analyzed.set(word, unit);
  }
  return unit;
}

/** The terms of a description as compared (pure: the same text always gives the same terms). */
export function descriptionTerms(description: string): DescriptionTerms {
  vocabulary ??= compile();
  const { groups, phrases, phraseTerms, phraseStarts, weights: known } = vocabulary;
  const weights = new Map<string, number>();
  const keep = (term: string) => {
    const first = term.charCodeAt(0);
    const weight = known.get(term) ?? (first >= 48 && first <= 57 && /^\d+$/.test(term) ? GENERIC_WEIGHT : 1);
    if (weight > (weights.get(term) ?? 0)) weights.set(term, weight);
  };
  const units: { key: string; term: string | undefined }[] = [];
  for (const word of words(description)) {
    if (isCjkTerm(word)) {
      for (const { term } of analyzeWords(word)) {
        const joining = [...term].some((character) => CJK_FUNCTION_CHARACTERS.has(character));
        units.push({ key: term, term: joining && [...term].length > 1 ? undefined : term });
      }
    } else {
      units.push(unitOf(word));
    }
  }
  for (let at = 0; at < units.length; ) {
    let length = phraseStarts.has(units[at]!.key) ? Math.min(MAX_PHRASE_WORDS, units.length - at) : 0;
    for (; length >= 2; length--) {
      let key = units[at]!.key;
      for (let next = at + 1; next < at + length; next++) key += ` ${units[next]!.key}`;
      // One term for the phrase: "pull request" is one thing, and "request" alone is boilerplate.
      if (phrases.has(key)) {
        keep(phraseTerms.get(key)!);
        break;
      }
    }
    if (length >= 2) {
      at += length;
      continue;
    }
    const { term } = units[at]!;
    if (term !== undefined) keep(term);
    at += 1;
  }
  let total = 0;
  const entries: TermEntry[] = [];
  for (const [term, weight] of weights) {
    if (weight === 0) {
      weights.delete(term);
      continue;
    }
    total += weight;
    const phrase = term.includes(' ');
    entries.push({
      term,
      weight,
      groups: phrase ? phrases.get(term) : groups.get(term),
      words: phrase ? term.split(' ') : undefined,
      word: !phrase && !isCjkTerm(term),
    });
  }
  return { weights, total, entries, index: indexOf(entries) };
}

function indexOf(entries: readonly TermEntry[]): TermIndex {
  const index: TermIndex = {
    byTerm: new Map(),
    byGroup: new Map(),
    byStart: new Map(),
    byPhraseWord: new Map(),
  };
  const push = <K>(map: Map<K, TermEntry[]>, key: K, entry: TermEntry) => {
    const held = map.get(key);
    if (held) held.push(entry);
    else map.set(key, [entry]);
  };
  for (const entry of entries) {
    index.byTerm.set(entry.term, entry);
    for (const group of entry.groups ?? []) push(index.byGroup, group, entry);
    if (startsVariant(entry)) push(index.byStart, entry.term.slice(0, VARIANT_MIN_LENGTH), entry);
    for (const word of entry.words ?? []) push(index.byPhraseWord, word, entry);
  }
  return index;
}

/** Whether a term may be one side of a spelling variant (a word, or a phrase it starts). */
function startsVariant(entry: TermEntry): boolean {
  return entry.term.length >= VARIANT_MIN_LENGTH && !isCjkTerm(entry.term);
}

/** The terms of `other` that relation() may find related to `entry` (each at most once). */
function candidates(entry: TermEntry, other: TermIndex): Set<TermEntry> {
  const found = new Set<TermEntry>();
  for (const group of entry.groups ?? []) for (const held of other.byGroup.get(group) ?? []) found.add(held);
  if (startsVariant(entry))
    for (const held of other.byStart.get(entry.term.slice(0, VARIANT_MIN_LENGTH)) ?? []) found.add(held);
  if (entry.word) for (const held of other.byPhraseWord.get(entry.term) ?? []) found.add(held);
  for (const word of entry.words ?? []) {
    const held = other.byTerm.get(word);
    if (held) found.add(held);
  }
  return found;
}

/**
 * What one term counts for another: a synonym, a spelling variant, words of one lexicon group, or
 * nothing; `strict` leaves out the last (they are not the same thing said twice).
 */
function relation(a: TermEntry, b: TermEntry, strict = false): number {
  let related = 0;
  if (a.groups !== undefined && b.groups !== undefined) {
    for (const group of b.groups) {
      if (!a.groups.includes(group)) continue;
      if (group >= LEXICON.length) return SYNONYM_MATCH;
      related = RELATED_MATCH;
    }
  }
  const short = a.term.length <= b.term.length ? a : b;
  const long = short === a ? b : a;
  if (short.word) {
    if (short.term.length >= VARIANT_MIN_LENGTH && long.term.startsWith(short.term)) return VARIANT_MATCH;
    // A phrase and one of its words: "internal communication" and "internal".
    if (long.words?.includes(short.term)) return VARIANT_MATCH;
  }
  return strict ? 0 : related;
}

/**
 * How alike two descriptions are, from 0 (nothing shared) to 1 (the same terms): a weighted cosine over
 * their terms, each matched at most once, first by the same term, then by the best remaining synonym,
 * variant or word of its lexicon group. A term left over that means what a term of the other side
 * means (a synonym or variant) says again what both say, and is left out of its side's weight.
 */
export function descriptionSimilarity(a: DescriptionTerms, b: DescriptionTerms): number {
  if (a.total === 0 || b.total === 0) return 0;
  let matched = 0;
  const restA: TermEntry[] = [];
  for (const entry of a.entries) {
    const other = b.weights.get(entry.term);
    if (other === undefined) restA.push(entry);
    else matched += Math.min(entry.weight, other);
  }
  const restB = b.entries.filter((entry) => !a.weights.has(entry.term));
  const used = new Set<TermEntry>();
  if (restA.length > 0 && restB.length > 0) {
    // Pairs of leftover terms that are related, best first; then each term is matched once, greedily.
    const pairs: { x: TermEntry; y: TermEntry; gain: number; key: string }[] = [];
    for (const x of restA) {
      for (const y of candidates(x, b.index)) {
        if (a.weights.has(y.term)) continue;
        const quality = relation(x, y);
        if (quality === 0) continue;
        // Ties broken by the pair's words whichever side is which, so a, b scores as b, a.
        const key = x.term < y.term ? `${x.term}\0${y.term}` : `${y.term}\0${x.term}`;
        pairs.push({ x, y, gain: quality * Math.min(x.weight, y.weight), key });
      }
    }
    pairs.sort((p, q) => q.gain - p.gain || (p.key < q.key ? -1 : p.key > q.key ? 1 : 0));
    for (const { x, y, gain } of pairs) {
      if (used.has(x) || used.has(y)) continue;
      used.add(x);
      used.add(y);
      matched += gain;
    }
  }
  const totalA = a.total - restated(restA, used, b);
  const totalB = b.total - restated(restB, used, a);
  const priorA = PRIOR_WEIGHT * Math.min(1, Math.max(0, totalA - matched));
  const priorB = PRIOR_WEIGHT * Math.min(1, Math.max(0, totalB - matched));
  return Math.min(1, matched / Math.sqrt((totalA + priorA) * (totalB + priorB)));
}

/** The weight of unmatched terms (`rest` less `used`) that mean what some term of `other` means. */
function restated(rest: readonly TermEntry[], used: ReadonlySet<TermEntry>, other: DescriptionTerms): number {
  let weight = 0;
  for (const entry of rest) {
    if (used.has(entry)) continue;
    for (const candidate of candidates(entry, other.index)) {
      if (relation(entry, candidate, true) > 0) {
        weight += entry.weight;
        break;
      }
    }
  }
  return weight;
}

/** Whether two descriptions are near-duplicates (NEAR_DUPLICATE_THRESHOLD). */
export function isNearDuplicate(a: string, b: string): boolean {
  return descriptionSimilarity(descriptionTerms(a), descriptionTerms(b)) >= NEAR_DUPLICATE_THRESHOLD;
}

/**
 * Whether one of two skills' descriptions names the other skill, where the other's own description
 * does not hold its name as a word ("for graph-first PyTorch workflows use torchdrug"): the authors
 * already told agents which is which, however alike the rest reads.
 */
export function namesEachOther(
  a: { name: string; description: string },
  b: { name: string; description: string },
): boolean {
  return names(a.description, b) || names(b.description, a);
}

function names(text: string, skill: { name: string; description: string }): boolean {
  const name = skill.name.toLowerCase();
  return holdsWord(text.toLowerCase(), name) && !holdsWord(skill.description.toLowerCase(), name);
}

/** Whether `word` is in `text` with no letter, digit or hyphen on either side. */
function holdsWord(text: string, word: string): boolean {
  if (word === '') return false;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    if (!WORD_CHARACTER.test(text.charAt(at - 1)) && !WORD_CHARACTER.test(text.charAt(at + word.length)))
      return true;
  }
  return false;
}

const WORD_CHARACTER = /^[\p{L}\p{N}-]$/u;

/**
 * The words to look a description's near-duplicates up by, as a search request: its content words
 * (no boilerplate, no generic ones), each once, longest first (long words are the rare ones, and a
 * search reads a rare word's few postings where a common word's are long), at most `max`.
 */
export function lookupWords(description: string, max: number): string[] {
  vocabulary ??= compile();
  const { weights } = vocabulary;
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const word of words(description)) {
    const term = isCjkTerm(word) ? word : unitOf(word).term;
    if (term === undefined || seen.has(term) || (weights.get(term) ?? 1) < 1) continue;
    seen.add(term);
    kept.push(word);
  }
  return kept.sort((a, b) => b.length - a.length).slice(0, max);
}
