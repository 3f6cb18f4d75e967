/**
 * How far the registry's token counts (o200k_base) are from other tokenizers, on real skills.
 *
 *   npx tsx bench/tokenizers.ts [skill-folder ...]
 *
 * Without arguments it reads a sample of /work/shared/skill-corpus (or SKILL_CORPUS). For each skill it
 * counts the layer-1 catalogue entry (name + description as the registry renders it) and the layer-2
 * body with:
 *   - o200k_base (gpt-tokenizer): what the registry stores; exact for GPT-4o, GPT-4.1, o-series;
 *   - cl100k_base (gpt-tokenizer): GPT-4, GPT-3.5;
 *   - @anthropic-ai/tokenizer: the legacy Claude (1/2) tokenizer, the only public Claude one. Claude 3+
 *     uses an unpublished tokenizer; Anthropic's count_tokens API is the exact source for those.
 * and prints each count with its ratio to o200k, then totals.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { countTokens as countClaudeLegacy } from '@anthropic-ai/tokenizer';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { prepareBundle } from '../src/bundle/prepare.js';
import { DEFAULT_LIMITS } from '../src/bundle/types.js';
import { countTokens as countO200k } from '../src/render/token-count.js';
import { readSkillFolder } from '../src/services/skill-folder.js';

const CORPUS = process.env.SKILL_CORPUS ?? '/work/shared/skill-corpus';
const SAMPLE = [
  'anthropics-skills/skill-creator',
  'anthropics-skills/mcp-builder',
  'anthropics-skills/frontend-design',
  'anthropics-skills/internal-comms',
  'obra-superpowers/brainstorming',
  'obra-superpowers/subagent-driven-development',
  'openai-skills/gh-fix-ci',
  'openai-skills/create-plan',
  'k-dense-ai-claude-scientific-skills/astropy',
  'alirezarezvani-claude-skills/code-to-prd',
  'kscz0000-antigravity-awesome-skills-cn/competitor-analysis',
  'kscz0000-antigravity-awesome-skills-cn/algolia-search',
];

const PLAIN = { disallowedSpecial: new Set<string>() };

interface Counts {
  chars: number;
  o200k: number;
  cl100k: number;
  claude: number;
}

function count(text: string): Counts {
  return {
    chars: text.length,
    o200k: countO200k(text),
    cl100k: countCl100k(text, PLAIN),
    claude: countClaudeLegacy(text),
  };
}

function add(a: Counts, b: Counts): Counts {
  return {
    chars: a.chars + b.chars,
    o200k: a.o200k + b.o200k,
    cl100k: a.cl100k + b.cl100k,
    claude: a.claude + b.claude,
  };
}

const ratio = (value: number, base: number) =>
  base === 0 ? '-' : `${((value / base - 1) * 100).toFixed(1)}%`;

function row(label: string, part: string, c: Counts): string[] {
  return [
    label,
    part,
    String(c.chars),
    String(c.o200k),
    String(c.cl100k),
    ratio(c.cl100k, c.o200k),
    String(c.claude),
    ratio(c.claude, c.o200k),
    String(Math.ceil(c.chars / 4)),
    ratio(Math.ceil(c.chars / 4), c.o200k),
  ];
}

function printTable(rows: string[][]): void {
  const header = [
    'skill',
    'part',
    'chars',
    'o200k',
    'cl100k',
    'vs o200k',
    'claude-legacy',
    'vs o200k',
    'chars/4',
    'vs o200k',
  ];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    `| ${r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(
    `|${widths.map((w, i) => (i < 2 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
  );
  for (const r of rows) console.log(line(r));
}

async function main(): Promise<void> {
  const folders =
    process.argv.length > 2
      ? process.argv.slice(2)
      : SAMPLE.map((relative) => path.join(CORPUS, relative)).filter((folder) => existsSync(folder));
  if (folders.length === 0) {
    console.error(`no skill folders found (corpus ${CORPUS}); pass folders as arguments`);
    process.exitCode = 1;
    return;
  }
  const rows: string[][] = [];
  const zero: Counts = { chars: 0, o200k: 0, cl100k: 0, claude: 0 };
  let entryTotal = zero;
  let bodyTotal = zero;
  for (const folder of folders) {
    let skill: { name: string; description: string; body: string };
    try {
      ({ skill } = prepareBundle(await readSkillFolder(folder), { limits: DEFAULT_LIMITS }));
    } catch (error) {
      console.error(`skipped ${folder}: ${(error as Error).message}`);
      continue;
    }
    const entry = count(
      `<skill>\n<name>${skill.name}</name>\n<description>${skill.description}</description>\n</skill>\n`,
    );
    const body = count(skill.body);
    entryTotal = add(entryTotal, entry);
    bodyTotal = add(bodyTotal, body);
    rows.push(row(skill.name, 'entry', entry), row('', 'body', body));
  }
  rows.push(row('TOTAL', 'entry', entryTotal), row('', 'body', bodyTotal));
  printTable(rows);
  console.log(
    '\nratios are (other / o200k - 1). o200k is exact for GPT-4o/4.1/o-series; claude-legacy is the pre-Claude-3 tokenizer (Claude 3+ is not public).',
  );
}

await main();
