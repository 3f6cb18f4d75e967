/**
 * Field lengths are held as one-byte codes (src/search/field-weights.ts): exact for short fields,
 * within half a step (under 2%) for long ones, never out of order, so length normalisation moves
 * by little and a longer field never counts as shorter.
 */
import { describe, expect, it } from 'vitest';
import { codeLength, LENGTH_BITS, lengthCode, MAX_FIELD_LENGTH } from '../../src/search/field-weights.js';

describe('length codes', () => {
  it('hold short lengths exactly and long ones within 2%, in order, in one byte', () => {
    let previous = -1;
    for (let length = 0; length <= MAX_FIELD_LENGTH + 100; length++) {
      const code = lengthCode(length);
      expect(code).toBeGreaterThanOrEqual(0);
      expect(code).toBeLessThan(1 << LENGTH_BITS);
      expect(code).toBeGreaterThanOrEqual(previous);
      previous = code;
      if (length < 128) expect(codeLength(code)).toBe(length);
      else if (length <= MAX_FIELD_LENGTH)
        expect(Math.abs(codeLength(code) - length) / length).toBeLessThan(0.02);
    }
    expect(codeLength(lengthCode(100_000))).toBe(MAX_FIELD_LENGTH);
  });
});
