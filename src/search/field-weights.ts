import { FIELDS, type Field } from './document.js';

/** How the search index weighs each field of a skill (BM25F, see search-index.ts). */
export interface FieldWeights {
  weight: Record<Field, number>;
  /** Length normalisation per field (0 none, 1 full). */
  b: Record<Field, number>;
  /** Term-frequency saturation. */
  k1: number;
  /** What a term in the skill's name adds after saturation, times the term's weight. */
  nameMatch: number;
  /** How much of its weight a term found only in the body counts towards coverage (see search). */
  bodyOnlyCoverage: number;
}

export const DEFAULT_WEIGHTS: FieldWeights = {
  weight: { name: 3, description: 2, headings: 1, body: 0.5 },
  b: { name: 0.3, description: 0.5, headings: 0.5, body: 0.75 },
  k1: 1.2,
  nameMatch: 1,
  bodyOnlyCoverage: 0.7,
};

/**
 * A field's length in terms is held in one byte, a code: exact below LENGTHS_EXACT_BELOW (names,
 * descriptions, most headings), then in steps of about 3.3% up to MAX_FIELD_LENGTH (a body's first
 * BODY_TERM_LIMIT words count, so bodies fall there). Half the bytes a slot of two-byte lengths took:
 * a search over a large catalogue's common terms reads a slot's lengths for every posting, and waits
 * on memory. Length normalisation moves by at most half a step.
 */
export const LENGTH_BITS = 8;
const LENGTHS_EXACT_BELOW = 128;
export const MAX_FIELD_LENGTH = 8192;
const LAST_CODE = (1 << LENGTH_BITS) - 1;
const STEP = (MAX_FIELD_LENGTH / LENGTHS_EXACT_BELOW) ** (1 / (LAST_CODE - LENGTHS_EXACT_BELOW));

/** The code a length (in terms) is held as. */
export function lengthCode(length: number): number {
  if (length < LENGTHS_EXACT_BELOW) return length;
  if (length >= MAX_FIELD_LENGTH) return LAST_CODE;
  return LENGTHS_EXACT_BELOW + Math.round(Math.log(length / LENGTHS_EXACT_BELOW) / Math.log(STEP));
}

/** The length a code stands for. */
export function codeLength(code: number): number {
  if (code < LENGTHS_EXACT_BELOW) return code;
  return Math.round(LENGTHS_EXACT_BELOW * STEP ** (code - LENGTHS_EXACT_BELOW));
}

/**
 * Per field and length code, the field's weight over its length normalisation for the given average
 * lengths, so scoring a posting is a few multiplications: at [f << LENGTH_BITS | code]. By length
 * rather than by skill, the table is the same size whatever the catalogue's, and new skills need
 * nothing of it.
 */
export function lengthFactors(weights: FieldWeights, average: readonly number[]): Float32Array<ArrayBuffer> {
  const { weight, b } = weights;
  const factors = new Float32Array(FIELDS.length << LENGTH_BITS);
  FIELDS.forEach((field, f) => {
    for (let code = 0; code <= LAST_CODE; code++) {
      const norm = 1 - b[field] + (b[field] * codeLength(code)) / average[f]!;
      factors[(f << LENGTH_BITS) | code] = weight[field] / norm;
    }
  });
  return factors;
}

/** BM25's inverse document frequency of a term `df` of `slots` skills hold. */
export function idfOf(slots: number, df: number): number {
  return Math.log(1 + (slots - df + 0.5) / (df + 0.5));
}
