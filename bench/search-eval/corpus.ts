import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSkillMd } from '../../src/bundle/validate.js';

export const SHARED = fileURLToPath(new URL('../../../shared/', import.meta.url));
export const CORPUS_ROOT = join(SHARED, 'skill-corpus');
export const QUERIES_FILE = join(SHARED, 'search-eval', 'queries.json');

export interface EvalQuery {
  q: string;
  relevant: string[];
}

export interface CorpusSkill {
  /** The folder holding SKILL.md (published as a bundle). */
  folder: string;
  name: string;
  description: string;
  body: string;
}

/** SKILL.md folders under the corpus root, in the order they are published (path order). */
export function corpusFolders(root = CORPUS_ROOT): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name === 'SKILL.md')
    .map((entry) => entry.parentPath)
    .sort();
}

/**
 * Every corpus skill the registry accepts, parsed as a publish parses it; where several folders
 * publish one name, the later one (its newer version) is kept, as the catalogue would.
 */
export function corpusSkills(root = CORPUS_ROOT): CorpusSkill[] {
  const byName = new Map<string, CorpusSkill>();
  for (const folder of corpusFolders(root)) {
    try {
      const bytes = readFileSync(join(folder, 'SKILL.md'));
      const skill = parseSkillMd(bytes, { folderName: basename(folder) });
      byName.delete(skill.name);
      byName.set(skill.name, {
        folder,
        name: skill.name,
        description: skill.description,
        body: skill.body,
      });
    } catch {
      // refused by the registry: does not count
    }
  }
  return [...byName.values()];
}

export function evalQueries(file = QUERIES_FILE): EvalQuery[] {
  return JSON.parse(readFileSync(file, 'utf8')) as EvalQuery[];
}

export interface Score {
  recall5: number;
  mrr10: number;
}

/** The search-eval README's scoring, unchanged. */
export function score(results: { relevant: string[]; got: string[] }[]): Score {
  let hit5 = 0;
  let rr = 0;
  for (const { relevant, got } of results) {
    const rank = got.slice(0, 10).findIndex((name) => relevant.includes(name));
    if (rank >= 0 && rank < 5) hit5++;
    if (rank >= 0) rr += 1 / (rank + 1);
  }
  return { recall5: hit5 / results.length, mrr10: rr / results.length };
}

export function folderLabel(folder: string): string {
  return `${basename(dirname(folder))}/${basename(folder)}`;
}
