import { countTokens as countWhole } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countCatalogueEntryTokens, countTokens } from '../../src/render/token-count.js';

const plain = { disallowedSpecial: new Set<string>() };

describe('token counting', () => {
  it('matches the tokenizer on ordinary text, whatever its length', () => {
    const paragraph =
      'Use this skill when the user asks to fill a PDF form. Read references/forms.md first, then run scripts/fill.py.\n';
    for (const text of [
      '',
      'hello',
      paragraph,
      paragraph.repeat(50),
      `# Title\n\n${'- item one two three\n'.repeat(400)}`,
    ]) {
      const whole = countWhole(text, plain);
      expect(Math.abs(countTokens(text) - whole)).toBeLessThanOrEqual(Math.ceil(text.length / 1000));
    }
  });

  it('counts special-token strings as text instead of throwing', () => {
    expect(countTokens('before <|endoftext|> after')).toBeGreaterThan(3);
  });

  it('counts a megabyte without whitespace (a base64 image) instead of running for minutes', () => {
    const base64 = Buffer.alloc(768 * 1024, 7).toString('base64');
    const count = countTokens(base64);
    expect(count).toBeGreaterThan(base64.length / 10);
    expect(count).toBeLessThan(base64.length);
  });

  it('never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(3000);
    expect(countTokens(emoji)).toBe(countTokens('😀'.repeat(1500)) * 2);
  });

  it('prices a catalogue entry from its name and description', () => {
    expect(countCatalogueEntryTokens('pdf-forms', 'Fill PDF forms.')).toBeGreaterThan(
      countTokens('Fill PDF forms.'),
    );
  });
});
