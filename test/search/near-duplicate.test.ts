import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prepareBundle } from '../../src/bundle/prepare.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import {
  descriptionSimilarity,
  descriptionTerms,
  isNearDuplicate,
  NEAR_DUPLICATE_THRESHOLD,
  namesEachOther,
} from '../../src/search/near-duplicate.js';

// The measure behind the shadowing finding (src/search/near-duplicate.ts), held to pairs written for
// it: rewordings of one job must score at or above the threshold, skills that share a topic but do
// another job below it.

interface Pair {
  a: string;
  b: string;
}

const PAIRS = JSON.parse(
  readFileSync(fileURLToPath(new URL('../fixtures/shadowing-pairs.json', import.meta.url)), 'utf8'),
) as { nearDuplicates: Pair[]; merelyRelated: Pair[] };

const similarity = (a: string, b: string) => descriptionSimilarity(descriptionTerms(a), descriptionTerms(b));

const scored = (pairs: Pair[]) =>
  pairs.map(({ a, b }) => ({ pair: `${a} <> ${b}`, similarity: Math.round(similarity(a, b) * 1000) / 1000 }));

describe('near-duplicate descriptions (test/fixtures/shadowing-pairs.json)', () => {
  it('holds enough pairs of each kind to place a threshold', () => {
    expect(PAIRS.nearDuplicates.length).toBeGreaterThanOrEqual(25);
    expect(PAIRS.merelyRelated.length).toBeGreaterThanOrEqual(25);
  });

  it('catches every rewording: synonyms, reordered clauses, other stop words, "Use when..." boilerplate', () => {
    const missed = scored(PAIRS.nearDuplicates).filter((pair) => pair.similarity < NEAR_DUPLICATE_THRESHOLD);
    expect(missed).toEqual([]);
  });

  it('flags no pair that merely shares a topic', () => {
    const flagged = scored(PAIRS.merelyRelated).filter((pair) => pair.similarity >= NEAR_DUPLICATE_THRESHOLD);
    expect(flagged).toEqual([]);
  });

  it('keeps a margin on both sides of the threshold', () => {
    const lowest = Math.min(...scored(PAIRS.nearDuplicates).map((pair) => pair.similarity));
    const highest = Math.max(...scored(PAIRS.merelyRelated).map((pair) => pair.similarity));
    expect(lowest - NEAR_DUPLICATE_THRESHOLD).toBeGreaterThanOrEqual(0.02);
    expect(NEAR_DUPLICATE_THRESHOLD - highest).toBeGreaterThanOrEqual(0.02);
  });

  it('scores the same text 1, no shared word 0, and either order alike', () => {
    const text = 'Review pull requests for bugs and leave inline comments.';
    expect(similarity(text, text)).toBe(1);
    expect(similarity(text, 'Bake sourdough bread with a starter.')).toBe(0);
    expect(similarity('', text)).toBe(0);
    for (const { a, b } of [...PAIRS.nearDuplicates, ...PAIRS.merelyRelated]) {
      expect(similarity(a, b)).toBeCloseTo(similarity(b, a), 9);
    }
  });

  it('reads boilerplate, British spelling and case as nothing', () => {
    expect(
      isNearDuplicate(
        'Optimise colour palettes for dashboards.',
        'Use this skill whenever the user asks to OPTIMIZE the COLOR palettes of dashboards.',
      ),
    ).toBe(true);
  });

  it('leaves apart two skills whose descriptions name each other, however alike the rest reads', () => {
    const deep = {
      name: 'deepchem',
      description: 'Molecular ML with featurizers; for graph models use torchdrug.',
    };
    const torch = {
      name: 'torchdrug',
      description: 'Graph models for molecules; for featurizers use deepchem.',
    };
    expect(namesEachOther(deep, torch)).toBe(true);
    // A name that is a word of the skill's own description is its topic, not a reference.
    const pdf = { name: 'pdf', description: 'Extract text from PDF files.' };
    expect(namesEachOther(pdf, { name: 'pdf-forms', description: 'Fill in PDF forms.' })).toBe(false);
    expect(namesEachOther({ name: 'forms', description: 'Fill in PDF forms.' }, pdf)).toBe(false);
  });
});

const CORPUS = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));

function corpusDescriptions(): { folder: string; name: string; description: string }[] {
  if (!existsSync(CORPUS)) return [];
  const found: { folder: string; name: string; description: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(dir, entry.name);
      if (!existsSync(path.join(full, 'SKILL.md'))) {
        walk(full);
        continue;
      }
      try {
        const bytes = readFileSync(path.join(full, 'SKILL.md'));
        const { skill } = prepareBundle([{ path: 'SKILL.md', bytes, mode: 0o644 }], {
          limits: DEFAULT_LIMITS,
        });
        found.push({ folder: path.relative(CORPUS, full), name: skill.name, description: skill.description });
      } catch {
        // Not a valid skill (the corpus holds some on purpose): never published, never compared.
      }
    }
  };
  walk(CORPUS);
  return found.sort((a, b) => (a.folder < b.folder ? -1 : 1));
}

const corpus = corpusDescriptions();

describe.skipIf(corpus.length === 0)('near-duplicates among the real corpus (../shared/skill-corpus)', () => {
  it('flags copies of one skill and few other pairs of its tens of thousands', () => {
    const terms = corpus.map((skill) => descriptionTerms(skill.description));
    const flagged: string[] = [];
    let identical = 0;
    for (let i = 0; i < corpus.length; i++) {
      for (let j = i + 1; j < corpus.length; j++) {
        const same = corpus[i]!.description === corpus[j]!.description;
        if (same) identical += 1;
        const near = descriptionSimilarity(terms[i]!, terms[j]!) >= NEAR_DUPLICATE_THRESHOLD;
        if (same) expect(near, `${corpus[i]!.folder} = ${corpus[j]!.folder}`).toBe(true);
        if (near && !same && !namesEachOther(corpus[i]!, corpus[j]!))
          flagged.push(`${corpus[i]!.folder} ~ ${corpus[j]!.folder}`);
      }
    }
    expect(identical).toBeGreaterThan(0);
    // Today: the two descriptions of one job ("write internal communications"), one of them copied.
    expect(flagged.length, flagged.join('\n')).toBeLessThanOrEqual(4);
  });
});
