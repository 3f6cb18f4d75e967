import { compacted } from './compaction.js';
import { FIELDS, type Field, forEachStoredTerm, type SearchDocument, type TermVisitor } from './document.js';
import {
  codeLength,
  DEFAULT_WEIGHTS,
  type FieldWeights,
  idfOf,
  LENGTH_BITS,
  lengthCode,
  lengthFactors,
} from './field-weights.js';
import { learnedBoosts } from './learned-boosts.js';
import { NameOrder } from './name-order.js';
import { NameSlots } from './name-slots.js';
import {
  COUNT_BITS,
  COUNTS,
  MASK,
  MAX_SLOTS,
  type PostingStats,
  Postings,
  postingStats,
  SHIFT,
  withRoom,
} from './postings.js';
import { type QueryTerm, queryTerms, requestWeight, type TermSource, uniqueTerms } from './query-terms.js';
import { SearchScratch } from './search-scratch.js';
import { spellingOf } from './spelling.js';
import { TermDictionary } from './term-dictionary.js';
import { bestByKey, kthHighest } from './top-k.js';

/**
 * An in-memory BM25F index over skills: name, description, headings and body, each with its own weight
 * and length normalisation, summed per term before saturation (Robertson and Zaragoza's BM25F).
 *
 * Postings are typed arrays, one per term, of document slots in increasing order with the term's
 * count in each field packed into 32 bits. Replacing or removing a skill marks its slot dead; dead
 * slots are skipped and the index is compacted once they are a quarter of all slots.
 */

export { DEFAULT_WEIGHTS, type FieldWeights } from './field-weights.js';

/** A word of the request as matched, and where. */
export interface MatchedTerm {
  /** The word as the request wrote it (lower-cased). */
  query: string;
  /** The index term it matched: its stem, or the closest known spelling's when the word was unknown. */
  term: string;
  /** The request's spelling was unknown and read as `term`. */
  corrected: boolean;
  /** Not the request's word but one the lexicon relates to it (expansion.ts): the skill's word. */
  related?: string;
  fields: Field[];
}

export interface SearchHit {
  name: string;
  score: number;
  matched: MatchedTerm[];
  /** Words of the request after which agents loaded this skill before. */
  learned: string[];
}

export interface SearchOptions {
  limit: number;
  /** Only these skills may be returned. */
  accept?: (name: string) => boolean;
  /** Skills agents loaded after searching with a term, and how many times (search-feedback.ts). */
  learned?: (term: string) => ReadonlyMap<string, number> | undefined;
  /**
   * The request's own words only (no corrected spellings, no related words), found in skills' names
   * and descriptions only, and hits without `matched`: what a lookup of skills described in the same
   * words wants (the shadowing check). A word many skills mention in their bodies then costs a read
   * of its postings, not a score for each of those skills.
   */
  literal?: boolean;
}

/**
 * Postings at least this long are read for the skills already found alone, once no other skill can
 * reach the first results any more (MaxScore-style pruning); shorter ones are always read whole.
 */
const PRUNE_FROM_DF = 2_000;

/** What translations count for a skill that matched nothing else of the request (see search). */
const LONE_TRANSLATION_WEIGHT = 0.1;

/** touchedMarks of a skill matched by one phrase's translations alone: ranked after the others. */
const LONE_TRANSLATION = 2;

/** The body's field number; a posting's name count, and its counts above the body: postings.ts. */
const BODY = FIELDS.indexOf('body');
const BODY_SHIFT = SHIFT[BODY]!;
const BODY_MASK = MASK[BODY]!;
const BODY_FACTORS = BODY << LENGTH_BITS;
const NAME_BITS = MASK[0] << SHIFT[0];
const ABOVE_BODY_BITS = (1 << BODY_SHIFT) - 1;
/** A posting's name and description counts (a literal search reads those fields only). */
const NAME_OR_DESCRIPTION_BITS = (1 << SHIFT[2]) - 1;

export class SearchIndex implements TermSource {
  /**
   * Postings by term. Most terms of a large catalogue occur in one skill: theirs is held as its one
   * posting word, a number in the map, rather than an object (see postingsOf).
   */
  private dictionary = new TermDictionary();
  /** By slot: the skill's name, or undefined once replaced or removed. */
  private names: (string | undefined)[] = [];
  /** By slot: the version of the skill its terms are of, when the owner gave one (version strings shared). */
  private versions: (string | undefined)[] = [];
  /** By slot: field lengths in terms as codes (field-weights.ts lengthCode), FIELDS.length per slot. */
  private lengths = new Uint8Array(64);
  /** The slot being put's field lengths, exact until counted() codes them. */
  private readonly putLengths = new Float64Array(FIELDS.length);
  private readonly slotOf = new NameSlots((slot) => this.names[slot]);
  /** Ties between equal scores are broken by name: see NameOrder. */
  private readonly nameOrder = new NameOrder();
  private readonly totals = new Float64Array(FIELDS.length);
  private dead = 0;
  /** The arrays a search adds into (see SearchScratch). */
  private readonly scratch = new SearchScratch();
  /** See fieldFactors(). */
  private factors = new Float32Array(0);
  private factorAverages: number[] | undefined;
  /**
   * Index terms for typo tolerance: they join as they arrive, so the first misspelt request after a
   * start does not wait for the whole dictionary to be sorted into buckets.
   */
  private spelling = spellingOf(this.dictionary);

  constructor(private readonly weights: FieldWeights = DEFAULT_WEIGHTS) {}

  get size(): number {
    return this.slotOf.size;
  }

  /** Slots numbered, replaced ones included until compaction (as document frequencies count them). */
  get slots(): number {
    return this.names.length;
  }

  /** Terms and postings held, for sizing. */
  stats(): PostingStats & { terms: number; slots: number; slotBytes: number; termBytes: number } {
    const perSlot = [this.lengths, this.factors, this.scratch, this.nameOrder, this.slotOf];
    return {
      terms: this.dictionary.size,
      /** Bytes of the dictionary: the terms' code units and its tables. */
      termBytes: this.dictionary.byteLength,
      slots: this.names.length,
      ...postingStats(this.dictionary.values()),
      /** Bytes of the per-slot arrays (field lengths and factors, a search's scratch, slots by name). */
      slotBytes: perSlot.reduce((sum, a) => sum + a.byteLength, 0),
    };
  }

  /** Gives back the room postings keep for growth: after building from many skills at once. */
  trim(): void {
    const slots = this.names.length;
    for (const postings of this.dictionary.values()) if (typeof postings !== 'number') postings.trim(slots);
    this.dictionary.trim();
  }

  has(name: string): boolean {
    return this.slotOf.has(name);
  }

  /** The index's own string for `name`, so other copies of the catalogue can hold the same one. */
  sharedName(name: string): string | undefined {
    const slot = this.slotOf.get(name);
    return slot === undefined ? undefined : this.names[slot];
  }

  /** The version a skill's terms were put with, if any. */
  versionOf(name: string): string | undefined {
    const slot = this.slotOf.get(name);
    return slot === undefined ? undefined : this.versions[slot];
  }

  /** Adds a skill (of `version`, when given), replacing what the index held under its name. */
  put(document: SearchDocument, version?: string): void {
    this.putTerms(
      document.name,
      (visit) => {
        FIELDS.forEach((field, f) => {
          for (const [term, count] of document.terms[field]) visit(f, term, count);
        });
      },
      version,
    );
  }

  /** Adds a skill from its terms as `terms` visits them, replacing its name's. */
  putTerms(name: string, terms: (visit: TermVisitor) => void, version?: string): void {
    const slot = this.newSlot(name, version);
    terms((f, term, count) => this.post(slot, f, count, term, 0, term.length));
    this.counted(slot);
  }

  /**
   * Adds a skill from its stored terms (document.ts encodeTerms, of the current analyzer version),
   * replacing its name's. Terms are looked up where they stand in `stored`: a start reads a large
   * catalogue's hundreds of millions of them without a string for each.
   */
  putStored(name: string, stored: string, version?: string): void {
    const slot = this.newSlot(name, version);
    forEachStoredTerm(stored, (f, start, end, hash, count) =>
      this.post(slot, f, count, stored, start, end, hash),
    );
    this.counted(slot);
  }

  /** Numbers a new slot for `name`, after removing what the index held under it. */
  private newSlot(name: string, version: string | undefined): number {
    this.remove(name);
    if (this.names.length >= MAX_SLOTS) this.compact();
    const slot = this.names.length;
    if (slot >= MAX_SLOTS) throw new Error(`the search index holds at most ${MAX_SLOTS} skills`);
    this.names.push(name);
    this.versions.push(version);
    this.nameOrder.set(slot, name);
    this.slotOf.set(name, slot);
    this.lengths = withRoom(this.lengths, (slot + 1) * FIELDS.length);
    return slot;
  }

  /**
   * Counts the term `text` spells from `start` to `end` `count` times in field `f` of the newest slot.
   * A term in several fields of the skill joins its counts into one posting: the slot's, which is the
   * term's last one once the first field gave it (no map of the skill's terms to merge them).
   */
  private post(
    slot: number,
    f: number,
    count: number,
    text: string,
    start: number,
    end: number,
    hash?: number,
  ): void {
    this.putLengths[f]! += count;
    const bits = Math.min(count, MASK[f]!) << SHIFT[f]!;
    const dictionary = this.dictionary;
    let id = dictionary.idOf(text, start, end, hash);
    if (id < 0) {
      id = dictionary.add(text, start, end, hash);
      dictionary.setValue(id, Postings.word(slot, bits));
      this.spelling.add(start === 0 && end === text.length ? text : dictionary.termOf(id), id);
      return;
    }
    const held = dictionary.valueOf(id);
    if (typeof held !== 'number') held.add(slot, bits);
    else if (held >>> COUNT_BITS === slot) dictionary.setValue(id, (held | bits) >>> 0);
    else {
      const postings = Postings.of(held);
      postings.push(slot, bits);
      dictionary.setValue(id, postings);
    }
  }

  /** Adds the newest slot's field lengths to the totals (the average lengths BM25F normalises by). */
  private counted(slot: number): void {
    // Averages count the lengths as coded, so a removal takes off exactly what was added.
    for (let f = 0; f < FIELDS.length; f++) {
      const code = lengthCode(this.putLengths[f]!);
      this.lengths[slot * FIELDS.length + f] = code;
      this.totals[f]! += codeLength(code);
      this.putLengths[f] = 0;
    }
  }

  remove(name: string): void {
    const slot = this.slotOf.get(name);
    if (slot === undefined) return;
    this.slotOf.delete(name);
    this.names[slot] = undefined;
    this.versions[slot] = undefined;
    this.dead += 1;
    FIELDS.forEach((_, f) => {
      this.totals[f]! -= codeLength(this.lengths[slot * FIELDS.length + f]!);
    });
    if (this.dead > 64 && this.dead * 4 > this.names.length) this.compact();
  }

  search(query: string, options: SearchOptions): SearchHit[] {
    const size = this.slotOf.size;
    if (size === 0 || options.limit <= 0) return [];
    const words = uniqueTerms(query);
    const slots = this.slots;
    const literal = options.literal === true;
    const terms = queryTerms(words, query, this, literal);
    const learned = options.learned
      ? learnedBoosts(words, options.learned, {
          slots,
          slotOf: (name) => this.slotOf.get(name),
          df: (term) => this.postingsOf(term)?.df ?? 0,
        })
      : undefined;
    if (terms.length === 0 && !learned) return [];
    // (Only a request with translations has anything to sum per unit and add at the end: most have none.)
    const translating = terms.some(({ translation }) => translation);
    const scratch = this.scratch;
    scratch.ensure(slots, translating);
    const { sums, unitPairs, translatedPairs, translatedUnits } = scratch;
    // Replaced and removed skills keep their postings until compaction: only then is a slot's name looked at.
    const names = this.names;
    const hasDead = this.dead > 0;
    const factors = this.fieldFactors();
    const lengths = this.lengths;
    const { k1, nameMatch, bodyOnlyCoverage } = this.weights;
    // Document frequencies count replaced slots until compaction (Postings.df): so does N.
    const idfs = terms.map(({ postings, boost }) => idfOf(slots, postings.df) * boost);
    const totalIdf = requestWeight(terms, idfs);
    // The most one term adds to a skill's score: BM25 saturates below (k1 + 1) times the weight.
    let remaining = idfs.reduce((sum, idf) => sum + idf * (k1 + 1 + nameMatch), 0);
    /** The weight of the terms not read yet: the most coverage a skill not found yet can reach. */
    let idfLeft = idfs.reduce((sum, idf) => sum + idf, 0);
    /** The highest score summed so far (translations are summed at the end). */
    let highest = 0;
    const isTouched = scratch.touchedMarks;
    const touchedSlots = scratch.touchedSlots;
    let touchedCount = 0;
    for (const slot of learned?.keys() ?? []) {
      touchedSlots[touchedCount++] = slot;
      isTouched[slot] = 1;
    }
    /** Slots the translations of the current unit matched (see below). */
    let inUnit = scratch.unitSlots;
    let inUnitCount = 0;
    let candidatesOnly = false;
    const wanted = options.limit;
    for (let t = 0; t < terms.length; t++) {
      const { postings, unit, translation } = terms[t]!;
      const idf = idfs[t]!;
      const alone = translation && terms[t - 1]?.unit !== unit && terms[t + 1]?.unit !== unit;
      if (!candidatesOnly && postings.length > PRUNE_FROM_DF && touchedCount >= wanted) {
        // A skill no earlier term matched can sum at most `remaining`, and cover at most the weight of
        // the terms left: once the k-th best lower bound of the skills already found is above that
        // score, only those skills can still make the first k.
        const untouchedBest =
          totalIdf > 0 ? remaining * Math.sqrt(Math.min(1, idfLeft / totalIdf)) : remaining;
        const found = touchedSlots.subarray(0, touchedCount);
        // (That bound is at most the highest partial score: no need to find it while the best is above.)
        candidatesOnly =
          untouchedBest < highest &&
          untouchedBest < this.kthLowerBound(found, wanted, totalIdf, options.accept);
      }
      remaining -= idf * (k1 + 1 + nameMatch);
      idfLeft -= idf;
      const { data, dense, first } = postings;
      const denseValues = dense?.values;
      const palette = dense?.palette;
      // Few candidates against a long list: look each one up rather than read the whole list (a
      // dense one answers a lookup at once).
      const lookUp = candidatesOnly && touchedCount * (dense ? 1 : 24) < postings.length;
      const steps = lookUp ? touchedCount : dense ? Math.min(dense.length, slots) : postings.length;
      for (let step = 0; step < steps; step++) {
        let slot: number;
        let packed: number;
        if (lookUp) {
          slot = touchedSlots[step]!;
          packed = postings.find(slot);
          if (packed === 0 || (hasDead && names[slot] === undefined)) continue;
        } else if (denseValues) {
          slot = step;
          packed = denseValues[step]!;
          if (packed === 0) continue;
          if (candidatesOnly ? isTouched[slot] === 0 : hasDead && names[slot] === undefined) continue;
          if (palette) packed = palette[packed]!;
        } else {
          const entry = data ? data[step]! : first;
          slot = entry >>> COUNT_BITS;
          if (candidatesOnly ? isTouched[slot] === 0 : hasDead && names[slot] === undefined) continue;
          packed = entry & COUNTS;
        }
        if (literal) {
          packed &= NAME_OR_DESCRIPTION_BITS;
          if (packed === 0) continue;
        }
        const base = slot * FIELDS.length;
        const aboveBody = (packed & ABOVE_BODY_BITS) !== 0;
        let tf = 0;
        if (!aboveBody) {
          // Most postings of a common word are in bodies alone: one field to weigh.
          tf = ((packed >>> BODY_SHIFT) & BODY_MASK) * factors[BODY_FACTORS | lengths[base + BODY]!]!;
        } else {
          for (let f = 0; f < FIELDS.length; f++) {
            const count = (packed >>> SHIFT[f]!) & MASK[f]!;
            if (count !== 0) tf += count * factors[(f << LENGTH_BITS) | lengths[base + f]!]!;
          }
        }
        if (isTouched[slot] === 0) {
          isTouched[slot] = 1;
          touchedSlots[touchedCount++] = slot;
        }
        // The name says what a skill is for; summed with the other fields before saturation it would
        // count no more than a body repeating the word, hence its own share after saturation.
        const score = (idf * tf * (k1 + 1)) / (tf + k1) + ((packed & NAME_BITS) !== 0 ? idf * nameMatch : 0);
        // A word found only in the body says less about what the skill is for: it covers less.
        const covered = aboveBody ? idf : idf * bodyOnlyCoverage;
        if (!translation) {
          const summed = sums[2 * slot]! + score;
          sums[2 * slot] = summed;
          if (summed > highest) highest = summed;
          sums[2 * slot + 1]! += covered;
        } else if (alone) {
          // The unit's one translation: its best is its score, counted as the end of a unit would.
          if (score > 0) {
            translatedPairs[2 * slot]! += Math.fround(score);
            translatedPairs[2 * slot + 1]! += Math.fround(covered);
            translatedUnits[slot]! += 1;
          }
        } else if (score > unitPairs[2 * slot]!) {
          // The translations of one phrase ("审查", "评审", "代码审查" for "review") say one thing:
          // a skill scores the best of them, not their sum.
          if (unitPairs[2 * slot] === 0) {
            if (inUnitCount === inUnit.length) inUnit = scratch.growUnitSlots(inUnitCount + 1);
            inUnit[inUnitCount++] = slot;
          }
          unitPairs[2 * slot] = score;
          unitPairs[2 * slot + 1] = covered;
        }
      }
      if (translation && terms[t + 1]?.unit !== unit) {
        for (let at = 0; at < inUnitCount; at++) {
          const slot = inUnit[at]!;
          translatedPairs[2 * slot]! += unitPairs[2 * slot]!;
          translatedPairs[2 * slot + 1]! += unitPairs[2 * slot + 1]!;
          translatedUnits[slot]! += 1;
          unitPairs[2 * slot] = 0;
          unitPairs[2 * slot + 1] = 0;
        }
        inUnitCount = 0;
      }
    }
    const touched = touchedSlots.subarray(0, touchedCount);
    for (const slot of touched.subarray(0, translating ? touchedCount : 0)) {
      if (translatedUnits[slot] === 0) continue;
      // One related word of another language is weak evidence alone (it may mean something else
      // there): it counts in full beside another match of the request, and ranks last on its own.
      if (sums[2 * slot + 1]! > 0 || translatedUnits[slot]! > 1) {
        sums[2 * slot]! += translatedPairs[2 * slot]!;
        sums[2 * slot + 1]! += translatedPairs[2 * slot + 1]!;
      } else {
        sums[2 * slot]! += translatedPairs[2 * slot]! * LONE_TRANSLATION_WEIGHT;
        sums[2 * slot + 1]! += translatedPairs[2 * slot + 1]! * LONE_TRANSLATION_WEIGHT;
        if (!learned?.has(slot)) isTouched[slot] = LONE_TRANSLATION;
      }
      translatedPairs[2 * slot] = 0;
      translatedPairs[2 * slot + 1] = 0;
      translatedUnits[slot] = 0;
    }
    // Skills that match more of the request's weight rank higher than ones that match one word often
    // (the coverage factor); learned loads add after it. The number the ranking compares first then
    // takes the place of the request weight matched, not needed any more: the score, and below every
    // other skill's (-1 to 0) for a skill matched by translations alone. All of it is done as the
    // ranking (bestByKey) reads each skill: one pass over the skills found, not one more before it.
    const learnedCount = learned?.size ?? 0;
    const boosts = learnedCount > 0 ? [...learned!.values()] : [];
    const finish = (slot: number, at: number) => {
      if (totalIdf > 0) sums[2 * slot]! *= Math.sqrt(sums[2 * slot + 1]! / totalIdf);
      // The learned skills come first among those found, in the order of `learned`.
      if (at < learnedCount) sums[2 * slot]! += boosts[at]!.boost;
      const score = sums[2 * slot]!;
      sums[2 * slot + 1] = isTouched[slot] === LONE_TRANSLATION ? -1 / (1 + score) : score;
    };
    const accept = options.accept;
    const nameOrder = this.nameOrder;
    const ranked = bestByKey(
      touched,
      options.limit,
      sums,
      2,
      1,
      (x, y) =>
        isTouched[x]! < isTouched[y]! ||
        (isTouched[x] === isTouched[y] &&
          (sums[2 * x]! > sums[2 * y]! || (sums[2 * x] === sums[2 * y] && nameOrder.before(x, y, names)))),
      (slot) => names[slot] !== undefined && (accept?.(names[slot]!) ?? true),
      finish,
    );
    const hits = ranked.map((slot) => ({
      name: this.names[slot]!,
      score: sums[2 * slot]!,
      matched: literal ? [] : this.explain(slot, terms),
      learned: learned?.get(slot)?.words ?? [],
    }));
    if (touchedCount * 8 > slots) {
      // Most of the index found (common words): zeroing the arrays whole beats visiting each slot.
      sums.fill(0);
      isTouched.fill(0);
    } else {
      for (const slot of touched) {
        sums[2 * slot] = 0;
        sums[2 * slot + 1] = 0;
        isTouched[slot] = 0;
      }
    }
    return hits;
  }

  /**
   * The k-th best score the skills found so far are sure to reach (their partial sums, with the
   * coverage factor of what they matched so far: more matches only raise both).
   */
  private kthLowerBound(
    touched: ArrayLike<number>,
    k: number,
    totalIdf: number,
    accept: SearchOptions['accept'],
  ): number {
    const { names } = this;
    const { sums } = this.scratch;
    return kthHighest(
      touched,
      k,
      // Rounded as the final score will be (in single precision), so it is never above that score.
      (slot) => Math.fround(sums[2 * slot]! * Math.sqrt(sums[2 * slot + 1]! / totalIdf)),
      (slot) => names[slot] !== undefined && (accept?.(names[slot]!) ?? true),
    );
  }

  /**
   * The length factors (lengthFactors), kept while the average field lengths stay within 2% of those
   * they were made with; remade otherwise.
   */
  private fieldFactors(): Float32Array {
    const size = Math.max(this.slotOf.size, 1);
    const average = FIELDS.map((_, f) => Math.max(this.totals[f]! / size, 1));
    const made = this.factorAverages;
    const stale = !made || average.some((value, f) => Math.abs(value - made[f]!) > made[f]! * 0.02);
    if (!stale) return this.factors;
    const factors = lengthFactors(this.weights, average);
    this.factors = factors;
    this.factorAverages = average;
    return factors;
  }

  /** Which query terms a document matched, and in which fields. */
  private explain(slot: number, terms: readonly QueryTerm[]): MatchedTerm[] {
    const matched: MatchedTerm[] = [];
    for (const { query, term, postings, corrected, related } of terms) {
      const packed = postings.find(slot);
      if (packed === 0) continue;
      const fields = FIELDS.filter((_, f) => ((packed >>> SHIFT[f]!) & MASK[f]!) !== 0);
      matched.push({ query, term, corrected, fields, ...(related === undefined ? {} : { related }) });
    }
    return matched;
  }

  /** The most common index term within an edit or two of an unknown word (see SpellingBuckets). */
  closestSpelling(term: string): string | undefined {
    return this.spelling.closest(term, (candidate) => this.postingsOf(candidate)?.df ?? 0);
  }

  /** A term's postings (an object made on the spot for a term held as its one posting word). */
  postingsOf(term: string): Postings | undefined {
    const held = this.dictionary.get(term);
    return held === undefined ? undefined : Postings.of(held);
  }

  /** Rebuilds postings without dead slots. */
  private compact(): void {
    const kept = compacted(this.names, this.versions, this.lengths, this.dictionary, this.slotOf.size);
    this.dictionary = kept.dictionary;
    this.names = kept.names;
    this.slotOf.reset(kept.names);
    this.nameOrder.reset(kept.names);
    this.versions = kept.versions;
    this.lengths = kept.lengths;
    this.dead = 0;
    this.factorAverages = undefined;
    this.spelling = spellingOf(kept.dictionary);
  }
}

export { uniqueTerms } from './query-terms.js';
