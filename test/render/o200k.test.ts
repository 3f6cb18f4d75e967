/**
 * src/render/o200k.ts counts o200k_base tokens from gpt-tokenizer's vocabulary file in compact
 * tables; gpt-tokenizer's own countTokens is the reference it must agree with, token for token.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { countTokens as reference } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countO200k } from '../../src/render/o200k.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const expected = (text: string) => reference(text, PLAIN);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHARED_CORPUS = path.join(ROOT, '../shared/skill-corpus');

/** Text files under `dir` (Markdown, scripts, references), at most `limit` of them. */
function textFiles(dir: string, limit: number): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (found.length >= limit) return;
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(md|txt|py|sh|js|ts|json|ya?ml)$/i.test(entry.name) && statSync(full).size < 200_000) {
        found.push(full);
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

describe('o200k counts', () => {
  it('agree with gpt-tokenizer on the seed skills and the project docs', () => {
    const files = [
      ...textFiles(path.join(ROOT, 'skills-seed'), 200),
      ...textFiles(path.join(ROOT, 'docs'), 50),
      path.join(ROOT, 'README.md'),
    ];
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect({ file, count: countO200k(text) }).toEqual({ file, count: expected(text) });
      // Again, with every piece of it in the count cache now.
      expect({ file, count: countO200k(text) }).toEqual({ file, count: expected(text) });
    }
  });

  it.skipIf(!existsSync(SHARED_CORPUS))(
    'agree with gpt-tokenizer on the shared corpus of real skills',
    () => {
      const files = textFiles(SHARED_CORPUS, 3000);
      expect(files.length).toBeGreaterThan(200);
      let mismatches = 0;
      for (const file of files) {
        const text = readFileSync(file, 'utf8');
        if (countO200k(text) !== expected(text)) mismatches += 1;
      }
      expect(mismatches).toBe(0);
    },
    // Thousands of files through the reference tokenizer: seconds alone, several times that when the
    // whole suite shares the machine.
    120_000,
  );

  it('agree on text in many scripts: CJK, emoji, contractions, digits, lone surrogates, special tokens', () => {
    for (const text of [
      '',
      ' ',
      'a',
      "I'll say they've DON'T we'd",
      '读取 PDF 文件并提取表格。使用 pdfplumber。',
      'スキルを読み込む。한국어 텍스트. Ελληνικά. Русский текст.',
      '😀👍🏽 family: 👨‍👩‍👧‍👦 flags 🇫🇷',
      '12345678901234567890 3.14159 1,000,000',
      'before <|endoftext|> after <|im_start|>',
      '\ud800 lone \udc00 surrogates',
      '\r\n\r\n  \t\n   trailing   ',
      '// comment\n/* block */ => {} [] ();;;!!!???',
      'x'.repeat(3000),
      'ab'.repeat(1500),
      '\u0301\u0301combining',
    ]) {
      expect({ text, count: countO200k(text) }).toEqual({ text, count: expected(text) });
    }
  });

  it('agree on random text built from the characters that matter', () => {
    const pieces = fc.constantFrom(
      ...'a,Z,é,ß,Ω,中,文,の,한,😀,\u200d,\u0301,1,42, ,  ,\n,\r\n,\t'.split(','),
      ...["'", "'s", "'LL", '.', '/', '-', '_', '#', '*', '`', '<', '|', '>', '\u00a0', ','],
      ...['the', 'The', 'THE', 'skill', ' PDF', 'tion', '\ud83d'],
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        expect(countO200k(text)).toBe(expected(text));
      }),
      { numRuns: 2000 },
    );
    // U+FEFF is left out: the reference keys its vocabulary by decoded strings, and decoding drops a
    // leading byte order mark, so it misses the token EF BB BF (rank 5574) that o200k has; see below.
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        fc.pre(!text.includes('\uFEFF'));
        expect(countO200k(text)).toBe(expected(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('counts a byte order mark as the one token o200k has for it, where the reference splits it', () => {
    expect(countO200k('\uFEFF')).toBe(1);
    expect(expected('\uFEFF')).toBe(2);
    expect(countO200k('x\uFEFFy')).toBe(3);
  });
});
