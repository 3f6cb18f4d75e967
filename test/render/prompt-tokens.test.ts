/**
 * The prompt fragment's token counts are computed from remembered per-skill parts instead of counting
 * the whole fragment (src/render/prompt.ts). These tests check that the sums are the whole counts:
 * over the real-world corpus in every layout, over random text at every cut point token-count.ts calls
 * clean, and for budgeted fragments, whose answer must be what dropping skills one by one and counting
 * each candidate whole would give.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { countTokens as countWhole } from 'gpt-tokenizer';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareBundle } from '../../src/bundle/prepare.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import {
  buildPrompt,
  clearEntryTokenMemo,
  type PromptResult,
  type PromptSkill,
  type PromptStyle,
} from '../../src/render/prompt.js';
import { promptJsonBody, textBody } from '../../src/render/prompt-document.js';
import { jsonBody } from '../../src/render/response-bodies.js';
import { countTokens, isCleanCut } from '../../src/render/token-count.js';
import { promptJsonSchema } from '../../src/wire/index.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const whole = (text: string) => countWhole(text, PLAIN);

const CORPUS = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));

function corpusSkills(): PromptSkill[] {
  if (!existsSync(CORPUS)) return [];
  const folders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(dir, entry.name);
      if (existsSync(path.join(full, 'SKILL.md'))) folders.push(full);
      else walk(full);
    }
  };
  walk(CORPUS);
  const byName = new Map<string, PromptSkill>();
  for (const folder of folders.sort()) {
    const bytes = readFileSync(path.join(folder, 'SKILL.md'));
    try {
      const { skill, digest } = prepareBundle([{ path: 'SKILL.md', bytes, mode: 0o644 }], {
        limits: DEFAULT_LIMITS,
        nameOverride: path.basename(folder).toLowerCase(),
      });
      if (byName.has(skill.name)) continue;
      byName.set(skill.name, {
        name: skill.name,
        description: skill.description,
        version: '1.0.0',
        digest,
        tokens: { body: 1 },
        loadCount: 0,
        lastLoadedAt: null,
      });
    } catch {
      // Refused by the validator: not in any catalogue.
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The entries of a rendered fragment, as text. */
function entriesOf(prompt: string, style: PromptStyle): string[] {
  if (style === 'xml') return prompt.match(/<skill>\n[\s\S]*?<\/skill>\n/g) ?? [];
  return prompt.match(/^- \*\*.*\n/gm) ?? [];
}

/** Checks a result's counts against whole counts of its text. */
function expectExact(result: PromptResult, style: PromptStyle, label: string): void {
  const count = whole(result.prompt);
  expect(result.tokens, label).toBe(count);
  expect(countTokens(result.prompt), label).toBe(count);
  // The parts callers convert one by one make up the prompt, joined where counts add up.
  expect(result.parts.join(''), label).toBe(result.prompt);
  expect(
    result.parts.reduce((sum, part) => sum + whole(part), 0),
    label,
  ).toBe(count);
  const entries = entriesOf(result.prompt, style);
  expect(entries.length, label).toBe(result.included.length);
  result.included.forEach((skill, i) => {
    expect(skill.tokens.entry, `${label}: ${skill.name}`).toBe(whole(entries[i]!));
  });
}

const LAYOUTS: { style: PromptStyle; baseUrl: string; tag?: string }[] = [
  { style: 'xml', baseUrl: 'http://localhost:80' },
  { style: 'markdown', baseUrl: 'http://localhost:80' },
  { style: 'xml', baseUrl: 'https://skills.example.com/registry', tag: 'beta' },
  { style: 'markdown', baseUrl: 'https://a.example:8443', tag: 'v2.0-rc.1' },
];

const corpus = corpusSkills();

describe.skipIf(corpus.length === 0)('token counts over the real-world corpus', () => {
  beforeAll(() => clearEntryTokenMemo());

  it(`sum of the parts = count of the whole fragment for ${corpus.length} skills, every layout`, async () => {
    expect(corpus.length).toBeGreaterThan(150);
    for (const layout of LAYOUTS) {
      const label = JSON.stringify(layout);
      // Cold, then from remembered counts, then counting every entry whole (no digest).
      const cold = await buildPrompt(corpus, layout);
      expectExact(cold, layout.style, label);
      const warm = await buildPrompt(corpus, layout);
      expect(warm).toEqual(cold);
      const unremembered = await buildPrompt(
        corpus.map(({ digest: _, ...skill }) => skill),
        layout,
      );
      expect(unremembered).toEqual(cold);
    }
  });

  it('budgeted fragments are exact and within the budget, every skill included or omitted', async () => {
    for (const layout of LAYOUTS.slice(0, 2)) {
      const full = await buildPrompt(corpus, layout);
      // A budget that drops skills makes the fragment search-first: its instructions alone.
      const minimum = (await buildPrompt([], { ...layout, mode: 'search' })).tokens;
      for (const budget of [
        full.tokens,
        full.tokens - 1,
        Math.round(full.tokens * 0.6),
        Math.round(full.tokens * 0.1),
        minimum + 1500,
        minimum + 40,
      ]) {
        const label = `${layout.style} budget=${budget}`;
        const result = await buildPrompt(corpus, { ...layout, budget });
        expectExact(result, layout.style, label);
        expect(result.tokens, label).toBeLessThanOrEqual(budget);
        const names = [...result.included, ...result.omitted].map((skill) => skill.name).sort();
        expect(names, label).toEqual(corpus.map((skill) => skill.name));
        expect(
          result.omitted.every((skill) => skill.reason === 'budget'),
          label,
        ).toBe(true);
        expect(result.searchFirst, label).toBe(result.omitted.length > 0);
      }
    }
  });

  it('search-first fragments (mode=search) are exact too, listing everything when it fits', async () => {
    for (const layout of LAYOUTS) {
      const label = JSON.stringify(layout);
      const listed = await buildPrompt(corpus, layout);
      const searched = await buildPrompt(corpus, { ...layout, mode: 'search' });
      expectExact(searched, layout.style, label);
      expect(searched.searchFirst, label).toBe(true);
      expect(searched.included, label).toEqual(listed.included);
      expect(searched.prompt, label).toContain('search_skills');
      const fitting = await buildPrompt(corpus, { ...layout, mode: 'search', budget: searched.tokens });
      expect(fitting.prompt, label).toBe(searched.prompt);
      const tighter = await buildPrompt(corpus, { ...layout, mode: 'search', budget: searched.tokens - 1 });
      expectExact(tighter, layout.style, label);
      expect(tighter.omitted.length, label).toBeGreaterThan(0);
    }
  });
});

describe('clean cut points (token-count.ts isCleanCut)', () => {
  it('never change the count, on random text full of the characters that matter', () => {
    const alphabet = [
      ..."abZé1 2 3  \n\n\r\t/.,-<>()*'s&_:?=",
      '\u0301',
      '\u00a0',
      '😀',
      '中',
      'Ж',
      '\u2028',
    ];
    let state = 20260101;
    const random = (n: number) => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return (state >>> 8) % n;
    };
    let checked = 0;
    for (let t = 0; t < 20_000; t++) {
      let text = '';
      const length = 2 + random(24);
      for (let i = 0; i < length; i++) text += alphabet[random(alphabet.length)];
      for (let at = 1; at < text.length; at++) {
        if (!isCleanCut(text, at)) continue;
        checked += 1;
        const sum = whole(text.slice(0, at)) + whole(text.slice(at));
        if (sum !== whole(text)) expect({ text, at, sum }).toEqual({ text, at, sum: whole(text) });
      }
    }
    expect(checked).toBeGreaterThan(20_000);
  });

  it('make long text count as a whole, cut in pieces where it is clean', () => {
    const text = `${'Fill the form, then check each field (see references/forms.md).\n'.repeat(300)}${'word '.repeat(2_000)}${'z'.repeat(1900)} end`;
    expect(countTokens(text)).toBe(whole(text));
  });
});

describe('entries of any name and description', () => {
  it('count their parts exactly, whatever the characters', async () => {
    const descriptions = [
      'Use when asked to review pipelines.',
      'Multi-line\ndescription:\n  indented, with a trailing newline\n',
      '  leading and trailing blanks  ',
      `Quotes "double" 'single' & <b>tags</b> and a > sign; URL https://x.example/a?b=c.`,
      'Ends with a slash/',
      'Emoji 😀 and CJK 中文 and combining é.',
      '/starts with a slash',
      '- starts like a list item',
      // The longest description without a space the validator accepts.
      'x'.repeat(1024),
      `${'y'.repeat(1000)} then words`,
      `${'Long description with many words. '.repeat(30)}`,
    ];
    const names = ['a', 'pdf', 'x1', 'skill-2', 'a-b-c-123', '9lives', 'ab12cd'];
    const skills: PromptSkill[] = names.flatMap((name, i) =>
      descriptions.map((description, j) => ({
        name: `${name}-${i}-${j}`,
        description,
        version: '1.0.0',
        digest: `sha256:${i}-${j}`,
        tokens: { body: 1 },
        loadCount: 0,
        lastLoadedAt: null,
      })),
    );
    for (const layout of LAYOUTS) {
      const result = await buildPrompt(skills, layout);
      expectExact(result, layout.style, JSON.stringify(layout));
    }
  });
});

/**
 * What the budget semantics say, computed the slow way: drop skills in order (fewest loads, least
 * recently loaded, then longest entry, then name) from the search-first fragment, counting each
 * candidate whole with the omitted line naming the dropped skills, then counting them, and stop at
 * the first fit.
 */
async function referenceOmitted(
  skills: PromptSkill[],
  layout: { style: PromptStyle; baseUrl: string },
  budget: number,
): Promise<{ dropped: string[]; named: boolean } | undefined> {
  const full = await buildPrompt(skills, { ...layout, mode: 'search' });
  const entryTokens = new Map(full.included.map((skill) => [skill.name, skill.tokens.entry]));
  const order = [...skills].sort((a, b) => {
    if (a.loadCount !== b.loadCount) return a.loadCount - b.loadCount;
    const at = a.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
    const bt = b.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
    if (at !== bt) return at < bt ? -1 : 1;
    const diff = entryTokens.get(b.name)! - entryTokens.get(a.name)!;
    return diff !== 0 ? diff : a.name < b.name ? -1 : 1;
  });
  const entries = entriesOf(full.prompt, layout.style);
  for (let k = 1; k <= skills.length; k++) {
    const dropped = new Set(order.slice(0, k).map((skill) => skill.name));
    let listed = full.prompt;
    skills.forEach((skill, i) => {
      if (dropped.has(skill.name)) listed = listed.replace(entries[i]!, '');
    });
    // The line names them in catalogue order, as the entries are listed.
    const names = skills.filter((skill) => dropped.has(skill.name)).map((skill) => skill.name);
    const lines = [
      `Also available but not described here, to save space (load them by name): ${names.join(', ')}.\n`,
      `${k} more skill${k === 1 ? ' is' : 's are'} available but not described here: find ${k === 1 ? 'it' : 'them'} with search_skills.\n`,
    ];
    for (const [at, line] of lines.entries()) {
      let prompt = listed;
      if (layout.style === 'xml') prompt += line;
      else {
        const empty = k === skills.length;
        prompt = `${empty ? prompt.replace(/\n$/, '\n(no skills are listed here)\n') : prompt}\n${line}`;
      }
      if (whole(prompt) <= budget) return { dropped: [...dropped], named: at === 0 };
    }
  }
  return undefined;
}

describe('budgets', () => {
  it('drop exactly the skills that dropping one by one and counting whole would drop', async () => {
    const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes));
    const skills: PromptSkill[] = Array.from({ length: 40 }, (_, i) => ({
      name: `skill-${String(i).padStart(2, '0')}`,
      description: `Does task ${i}. ${'More words to vary the length. '.repeat(i % 7)}`,
      version: '1.0.0',
      digest: `sha256:budget-${i}`,
      tokens: { body: 1 },
      // Counts and times vary independently, so both the count and the recency order the drops.
      loadCount: i % 3 === 0 ? 0 : 1 + (i % 2),
      lastLoadedAt: i % 3 === 0 ? null : at(i % 5),
    }));
    for (const style of ['xml', 'markdown'] as const) {
      const layout = { style, baseUrl: 'https://r.example' };
      const full = await buildPrompt(skills, layout);
      for (const budget of [full.tokens - 1, full.tokens - 100, Math.round(full.tokens / 2), 1200, 700]) {
        const label = `${style} budget=${budget}`;
        const expected = await referenceOmitted(skills, layout, budget);
        const result = await buildPrompt(skills, { ...layout, budget });
        expect(expected, label).toBeDefined();
        expect(
          result.omitted.map((skill) => skill.name),
          label,
        ).toEqual(expected!.dropped);
        expect(result.searchFirst, label).toBe(true);
        expect(result.prompt.includes('(load them by name)'), label).toBe(expected!.named);
        expectExact(result, style, label);
      }
    }
  });

  it('count the dropped skills when even their names do not fit, and refuse below the minimum', async () => {
    const skills: PromptSkill[] = Array.from({ length: 500 }, (_, i) => ({
      name: `many-${i}`,
      description: `Skill number ${i}.`,
      version: '1.0.0',
      digest: `sha256:many-${i}`,
      tokens: { body: 1 },
      loadCount: 0,
      lastLoadedAt: null,
    }));
    for (const style of ['xml', 'markdown'] as const) {
      const layout = { style, baseUrl: 'https://r.example' };
      const instructions = (await buildPrompt([], { ...layout, mode: 'search' })).tokens;
      for (const budget of [instructions + 30, instructions + 300, instructions + 1000]) {
        const label = `${style} budget=${budget}`;
        const result = await buildPrompt(skills, { ...layout, budget });
        expectExact(result, style, label);
        expect(result.tokens, label).toBeLessThanOrEqual(budget);
        expect(result.searchFirst, label).toBe(true);
        expect(result.included.length + result.omitted.length, label).toBe(500);
        // 500 names take over 2,000 tokens: the line counts the dropped skills.
        expect(result.prompt, label).toMatch(
          new RegExp(
            `\\n${result.omitted.length} more skills are available but not described here: find them with search_skills\\.\\n$`,
          ),
        );
        expect(result.prompt, label).not.toContain('load them by name');
      }
      // The instructions alone leave no room for the line counting the skills.
      await expect(buildPrompt(skills, { ...layout, budget: instructions })).rejects.toMatchObject({
        status: 400,
      });
    }
  });
});

describe('answers converted in slices', () => {
  // Over a mebibyte of text, with a surrogate pair across the first slice boundary (2^20 characters).
  const long = `${'a'.repeat(2 ** 20 - 1)}😀 "quoted"\\ \n\t\u0001 é ${'中'.repeat(1_500_000)}`;

  it('is encoded in slices to exactly the bytes the response schema gives', async () => {
    for (const count of [0, 1, 1999, 2000, 4501]) {
      const value = {
        prompt: count === 4501 ? long : `Some "quoted" text\n<available_skills>\n${count}`,
        tokens: 12,
        included: Array.from({ length: count }, (_, i) => ({
          name: `skill-${i}`,
          version: '1.0.0',
          location: `https://r.example/skills/skill-${i}/content`,
          tokens: { entry: 40 + (i % 7), body: i },
          scan: i % 3 === 0 ? null : { verdict: i % 3 === 1 ? ('pass' as const) : ('warn' as const) },
        })),
        omitted: Array.from({ length: Math.floor(count / 2) }, (_, i) => ({
          name: `dropped-${i}`,
          reason: i % 2 === 0 ? ('budget' as const) : ('not-found' as const),
        })),
        omittedCount: count * 3,
        searchFirst: count % 2 === 0,
      };
      const sliced = await promptJsonBody(value);
      const whole = jsonBody(promptJsonSchema, value);
      expect(sliced.value.equals(whole.value), `count ${count}`).toBe(true);
      expect(sliced.bytes).toBe(whole.bytes);
    }
  });

  it('converts long text answers in slices to the same bytes', async () => {
    for (const text of ['', 'short', long]) {
      const body = await textBody([text, text]);
      expect(body.value.equals(Buffer.from(text + text)), `length ${text.length}`).toBe(true);
      expect(body.bytes).toBe(2 * Buffer.byteLength(text));
    }
  });
});
