/**
 * The scanner against the shared trust fixtures, this project's own fixtures by attack family
 * (test/fixtures/trust/<family>/<malicious|benign>/<skill>) and the real corpus:
 * `npx tsx bench/scan-eval.ts`. Prints every fixture's expected and actual verdict, every corpus
 * skill that warns or blocks (and why), and the time a skill takes. test/scan/evaluation.test.ts and
 * test/scan/families.test.ts assert the same figures.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ScanResult, scanBundle } from '../src/scan/index.js';

export const SHARED = fileURLToPath(new URL('../../shared/', import.meta.url));
export const FIXTURES = path.join(SHARED, 'trust-fixtures');
export const CORPUS = path.join(SHARED, 'skill-corpus');
export const OWN_FIXTURES = fileURLToPath(new URL('../test/fixtures/trust/', import.meta.url));

/** A skill folder's files, as a publish would send them (EXPECT.json is not part of a fixture). */
export function folderFiles(root: string): { path: string; bytes: Uint8Array }[] {
  const files: { path: string; bytes: Uint8Array }[] = [];
  for (const relative of readdirSync(root, { recursive: true }) as string[]) {
    const full = path.join(root, relative);
    if (!statSync(full).isFile() || relative === 'EXPECT.json') continue;
    files.push({ path: relative.split(path.sep).join('/'), bytes: readFileSync(full) });
  }
  return files;
}

export interface FixtureOutcome {
  kind: 'malicious' | 'benign';
  name: string;
  /** The attack family (the folder above kind) of this project's fixtures. */
  family?: string;
  /** EXPECT.json's paths: a blocking finding should name one of them, with a line. */
  paths?: string[];
  expected: 'pass' | 'warn' | 'block';
  result: ScanResult;
  /** block expected: blocked; warn expected on a malicious one: flagged at least; benign: not blocked. */
  ok: boolean;
}

export async function evaluateFixtures(): Promise<FixtureOutcome[]> {
  const outcomes: FixtureOutcome[] = [];
  for (const kind of ['malicious', 'benign'] as const) {
    const base = path.join(FIXTURES, kind);
    for (const name of readdirSync(base).sort()) {
      const expected = JSON.parse(readFileSync(path.join(base, name, 'EXPECT.json'), 'utf8')).verdict;
      const result = await scanBundle(folderFiles(path.join(base, name)));
      const ok =
        kind === 'benign'
          ? result.verdict !== 'block'
          : expected === 'block'
            ? result.verdict === 'block'
            : result.verdict !== 'pass';
      outcomes.push({ kind, name, expected, result, ok });
    }
  }
  return outcomes;
}

function okFor(kind: 'malicious' | 'benign', expected: string, result: ScanResult): boolean {
  if (kind === 'benign') return result.verdict !== 'block';
  return expected === 'block' ? result.verdict === 'block' : result.verdict !== 'pass';
}

/** This project's fixtures, family by family. */
export async function evaluateOwnFixtures(): Promise<FixtureOutcome[]> {
  const outcomes: FixtureOutcome[] = [];
  for (const family of readdirSync(OWN_FIXTURES).sort()) {
    if (!statSync(path.join(OWN_FIXTURES, family)).isDirectory()) continue;
    for (const kind of ['malicious', 'benign'] as const) {
      const base = path.join(OWN_FIXTURES, family, kind);
      if (!existsSync(base)) continue;
      for (const name of readdirSync(base).sort()) {
        const expect = JSON.parse(readFileSync(path.join(base, name, 'EXPECT.json'), 'utf8'));
        const result = await scanBundle(folderFiles(path.join(base, name)));
        outcomes.push({
          kind,
          name,
          family,
          paths: expect.paths ?? [],
          expected: expect.verdict,
          result,
          ok: okFor(kind, expect.verdict, result),
        });
      }
    }
  }
  return outcomes;
}

/** A blocked fixture's finding at or above high that names one of its EXPECT paths with a line. */
export function blockingOnPath(outcome: FixtureOutcome) {
  return outcome.result.findings.find(
    (finding) =>
      (finding.severity === 'high' || finding.severity === 'critical') &&
      finding.line > 0 &&
      (outcome.paths ?? []).includes(finding.path),
  );
}

/** Every skill folder (a folder holding SKILL.md) below the corpus. */
export function corpusSkills(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = path.join(dir, entry.name);
      if (existsSync(path.join(folder, 'SKILL.md'))) found.push(folder);
      else walk(folder);
    }
  };
  walk(CORPUS);
  return found.sort();
}

export async function evaluateCorpus(): Promise<{ skill: string; result: ScanResult; ms: number }[]> {
  const outcomes: { skill: string; result: ScanResult; ms: number }[] = [];
  for (const folder of corpusSkills()) {
    const files = folderFiles(folder);
    const started = performance.now();
    const result = await scanBundle(files);
    outcomes.push({ skill: path.relative(CORPUS, folder), result, ms: performance.now() - started });
  }
  return outcomes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const summary = (result: ScanResult) =>
    result.findings
      .filter((finding) => finding.severity !== 'low')
      .slice(0, 3)
      .map((finding) => `${finding.rule} (${finding.severity}) ${finding.path}:${finding.line}`)
      .join('; ');
  const fixtures = await evaluateFixtures();
  for (const one of fixtures) {
    console.log(
      `${one.ok ? 'ok  ' : 'MISS'} ${one.kind}/${one.name}: expected ${one.expected}, got ${one.result.verdict}  ${summary(one.result)}`,
    );
  }
  console.log(`fixtures: ${fixtures.filter((one) => one.ok).length} of ${fixtures.length} as expected`);
  const own = await evaluateOwnFixtures();
  for (const one of own) {
    const placed = one.expected !== 'block' || one.kind === 'benign' || blockingOnPath(one) !== undefined;
    console.log(
      `${one.ok && placed ? 'ok  ' : 'MISS'} ${one.family}/${one.kind}/${one.name}: expected ${one.expected}, got ${one.result.verdict}  ${summary(one.result)}`,
    );
  }
  const families = [...new Set(own.map((one) => one.family!))];
  for (const family of families) {
    const mine = own.filter((one) => one.family === family);
    console.log(`  ${family}: ${mine.filter((one) => one.ok).length} of ${mine.length} as expected`);
  }
  console.log(`own fixtures: ${own.filter((one) => one.ok).length} of ${own.length} as expected`);
  const corpus = await evaluateCorpus();
  for (const one of corpus) {
    if (one.result.verdict !== 'pass')
      console.log(`${one.result.verdict} ${one.skill}: ${summary(one.result)}`);
  }
  const times = corpus.map((one) => one.ms).sort((a, b) => a - b);
  console.log(
    `corpus: ${corpus.length} skills, ${corpus.filter((one) => one.result.verdict === 'block').length} blocked, ${corpus.filter((one) => one.result.verdict === 'warn').length} warned; scan p50 ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, p95 ${times[Math.floor(times.length * 0.95)]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`,
  );
}
