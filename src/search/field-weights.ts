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

/** A field's length in terms is counted up to this (the body's first BODY_TERM_LIMIT words count). */
export const LENGTH_BITS = 16;
export const MAX_FIELD_LENGTH = (1 << LENGTH_BITS) - 1;

/**
 * Per field and field length, the field's weight over its length normalisation for the given average
 * lengths, so scoring a posting is a few multiplications: at [f << LENGTH_BITS | length]. By length
 * rather than by skill, the table is the same size whatever the catalogue's, and new skills need
 * nothing of it.
 */
export function lengthFactors(weights: FieldWeights, average: readonly number[]): Float32Array<ArrayBuffer> {
  const { weight, b } = weights;
  const factors = new Float32Array(FIELDS.length << LENGTH_BITS);
  FIELDS.forEach((field, f) => {
    for (let length = 0; length <= MAX_FIELD_LENGTH; length++) {
      const norm = 1 - b[field] + (b[field] * length) / average[f]!;
      factors[(f << LENGTH_BITS) | length] = weight[field] / norm;
    }
  });
  return factors;
}
