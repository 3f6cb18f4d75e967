/**
 * Fitting a budget ranks only the first part of the keep order (src/render/prompt-budget.ts), growing
 * it when the budget keeps more: the fragment, its count and what it names as left out are the same
 * as with the whole order ranked at once, whatever the budget, style and load counts.
 */
import { describe, expect, it } from 'vitest';
import { type FitInput, fitPrompt } from '../../src/render/prompt-budget.js';
import { FragmentRenderer } from '../../src/render/prompt-render.js';
import { countEntries, Layout } from '../../src/render/prompt-tokens.js';
import type { PromptMode, PromptOptions, PromptSkill } from '../../src/render/prompt-types.js';
import { Slicer } from '../../src/render/slicer.js';

function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const WORDS = ['deploy', 'review', 'the', 'pull', 'request', 'tests', 'for', 'kubernetes', 'and', 'charts'];

function catalogue(random: () => number, count: number): PromptSkill[] {
  const names = [
    ...new Set(Array.from({ length: count }, () => `s-${Math.floor(random() * 1_000_000)}`)),
  ].sort();
  return names.map((name) => {
    const loads = random() < 0.1 ? Math.floor(random() * 5) : 0;
    const words = Array.from(
      { length: 2 + Math.floor(random() * 20) },
      () => WORDS[Math.floor(random() * 10)],
    );
    return {
      name,
      description: words.join(' '),
      version: '1.0.0',
      tokens: { body: 100 },
      scanVerdict: 'pass',
      loadCount: loads,
      lastLoadedAt: loads > 0 ? new Date(1_700_000_000_000 + Math.floor(random() * 10) * 1000) : null,
    };
  });
}

/** Fits `skills` (a copy: orders and counts are remembered per array) ranking `keepFirst` first. */
async function fitted(
  skills: readonly PromptSkill[],
  options: PromptOptions,
  budget: number,
  mode: PromptMode,
  keepFirst?: number,
) {
  const own = skills.slice();
  const slicer = new Slicer();
  const layout = new Layout(options, own);
  const input: FitInput = {
    skills: own,
    options,
    budget,
    mode,
    layout,
    entries: await countEntries(layout, slicer),
    renderer: new FragmentRenderer(own, options, slicer),
    slicer,
    ...(keepFirst === undefined ? {} : { keepFirst }),
  };
  try {
    const fit = await fitPrompt(input);
    return {
      prompt: fit.rendered.prompt,
      tokens: fit.tokens,
      kept: [...fit.kept],
      dropped: fit.dropped.count,
      mostLoaded: fit.dropped.mostLoaded(7),
      all: Array.from(fit.dropped.all()),
      searchFirst: fit.searchFirst,
    };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

describe('fitting a budget from the first part of the keep order', () => {
  it('gives what ranking the whole order gives, for any budget, style and mode', async () => {
    const random = sequence(7);
    let partial = 0;
    for (let round = 0; round < 40; round++) {
      const skills = catalogue(random, 20 + Math.floor(random() * 600));
      const options: PromptOptions = {
        style: round % 2 === 0 ? 'xml' : 'markdown',
        baseUrl: 'https://skills.example.org',
        ...(round % 3 === 0 ? { tag: 'stable' } : {}),
      };
      const mode: PromptMode = round % 4 === 0 ? 'search' : 'list';
      for (const budget of [300, 400 + Math.floor(random() * 4_000), 2_000 + Math.floor(random() * 30_000)]) {
        const whole = await fitted(skills, options, budget, mode, skills.length);
        const keepFirst = 1 + Math.floor(random() * 8);
        const first = await fitted(skills, options, budget, mode, keepFirst);
        expect(first, `round ${round}, budget ${budget}, keepFirst ${keepFirst}`).toEqual(whole);
        if ((whole.dropped ?? 0) > 0 && (whole.kept ?? []).length > keepFirst) partial += 1;
      }
    }
    // The rounds did make the ranked part grow, not just fit within it.
    expect(partial).toBeGreaterThan(20);
  });
});
