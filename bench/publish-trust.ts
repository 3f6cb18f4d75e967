/**
 * What trust costs a publish: `npm run bench:publish-trust -- [options]`.
 *
 *   --rounds N   scans of every bundle per configuration; per bundle the fastest counts (default 3)
 *   --http       also publish through the HTTP stack (DATABASE_URL for PostgreSQL, else an in-memory
 *                PGlite): 5 KB skills and 30 MiB bundles, publish p50/p95 next to the scan's and the
 *                signature's share, and the scan time of a crafted worst case
 *
 * The scan itself, as a publish runs it (src/scan, no I/O): every bundle of the 248-skill corpus
 * (../shared/skill-corpus), the shared trust fixtures and this project's fixtures by family
 * (test/fixtures/trust). For each set: scan time per bundle (median, p95, max) and the CPU time of the
 * whole set; then the same with each rule group left out (ScanOptions.skip), so the difference is what
 * that group costs. Figures go to docs/PERFORMANCE.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { writeTarGz } from '../src/bundle/archive-write.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { RULE_GROUPS, type RuleGroup } from '../src/scan/file-rules.js';
import { type ScannedFile, scanBundle } from '../src/scan/index.js';
import { corpusSkills, FIXTURES, folderFiles, OWN_FIXTURES } from './scan-eval.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
const MiB = 1024 * 1024;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Every skill folder (holding SKILL.md) below a root. */
function skillFolders(root: string): string[] {
  if (!existsSync(root)) return [];
  const found: string[] = [];
  const walk = (dir: string) => {
    if (existsSync(path.join(dir, 'SKILL.md'))) {
      found.push(dir);
      return;
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
    }
  };
  walk(root);
  return found.sort();
}

interface SetTimes {
  perBundle: number[];
  cpuMs: number;
}

/**
 * Scans every bundle `rounds` times; per bundle the fastest (what the rules cost, without the
 * collector's and other processes' pauses), and the CPU time of one pass (the median pass).
 */
async function timeSet(
  bundles: ScannedFile[][],
  skip: readonly RuleGroup[],
  rounds: number,
): Promise<SetTimes> {
  const times: number[][] = bundles.map(() => []);
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    for (const [at, files] of bundles.entries()) {
      const started = performance.now();
      // No budget here: the figures are the rules' cost, not where the budget cuts them off.
      await scanBundle(files, { skip, budgetMs: 60_000 });
      times[at]!.push(performance.now() - started);
    }
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  return { perBundle: times.map((one) => Math.min(...one)), cpuMs: percentile(cpu, 50) };
}

async function scanCost(rounds: number) {
  const sets: [string, ScannedFile[][]][] = [
    ['corpus (248 skills)', corpusSkills().map(folderFiles)],
    ['shared trust fixtures', skillFolders(FIXTURES).map(folderFiles)],
    ['own fixtures (7 families)', skillFolders(OWN_FIXTURES).map(folderFiles)],
  ];
  // Warm-up: compile every regular expression and the secretlint rules once.
  for (const [, bundles] of sets) for (const files of bundles) await scanBundle(files, { budgetMs: 60_000 });
  console.log('| set | rules | bundles | median ms | p95 ms | max ms | CPU ms (whole set) |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  const row = (set: string, label: string, count: number, times: SetTimes) =>
    console.log(
      `| ${set} | ${label} | ${count} | ${percentile(times.perBundle, 50).toFixed(2)} | ${percentile(times.perBundle, 95).toFixed(2)} | ${Math.max(...times.perBundle).toFixed(1)} | ${times.cpuMs.toFixed(0)} |`,
    );
  const groups: [string, RuleGroup[]][] = [
    ['all', []],
    ...RULE_GROUPS.map((group): [string, RuleGroup[]] => [`without ${group}`, [group]]),
    ['none of the groups', [...RULE_GROUPS]],
  ];
  for (const [set, bundles] of sets) {
    const all = await timeSet(bundles, [], rounds);
    row(set, 'all', bundles.length, all);
    for (const [label, skip] of groups.slice(1)) {
      const without = await timeSet(bundles, skip, rounds);
      row(set, label, bundles.length, without);
    }
  }
}

function skillMd(name: string, bodyBytes: number): string {
  const paragraph = 'Run the checks, read the report, fix what it names, and run them again. ';
  const body = `# ${name}\n\n${paragraph.repeat(Math.ceil(bodyBytes / paragraph.length)).slice(0, bodyBytes)}\n`;
  return `---\nname: ${name}\ndescription: Benchmark skill ${name} for publish latency.\n---\n${body}`;
}

function small(name: string) {
  return [
    { path: 'SKILL.md', bytes: Buffer.from(skillMd(name, 4_000)), mode: 0o644 },
    { path: 'scripts/check.sh', bytes: Buffer.from(`#!/bin/sh\nnpm test -- ${name}\n`), mode: 0o755 },
  ];
}

function large(name: string) {
  // Images and data (binary, checked by magic bytes) with 2 MiB of text: a realistic big bundle.
  return [
    { path: 'SKILL.md', bytes: Buffer.from(skillMd(name, 4_000)), mode: 0o644 },
    {
      path: 'references/guide.md',
      bytes: Buffer.from('Read this first. '.repeat((2 * MiB) / 17)),
      mode: 0o644,
    },
    ...Array.from({ length: 6 }, (_, i) => ({
      path: `assets/photo-${i}.png`,
      bytes: Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        randomBytes(4.6 * MiB - 8),
      ]),
      mode: 0o644,
    })),
  ];
}

/** Publishes through the HTTP stack: what the scan and the signature add to a publish. */
async function publishCost() {
  const config = loadConfig({
    SKILLREG_ADMIN_TOKEN: TOKEN,
    SKILLREG_SEED_DIR: '',
    LOG_LEVEL: 'silent',
    SKILLREG_DATA_DIR: 'memory://',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  const database = await openDatabase(
    config.databaseUrl ? { url: config.databaseUrl } : { dataDir: 'memory://' },
  );
  const app = await buildApp({ config, database, logger: false });
  const run = `${Date.now().toString(36)}`;
  for (const [label, make, count] of [
    ['5 KB skill', small, 200],
    ['30 MiB bundle', large, 12],
  ] as const) {
    const publish: number[] = [];
    const scan: number[] = [];
    const sign: number[] = [];
    for (let i = 0; i < count; i++) {
      const name = `bench-${run}-${label.startsWith('5') ? 's' : 'l'}${i}`;
      const files = make(name);
      const started = performance.now();
      await scanBundle(files);
      scan.push(performance.now() - started);
      const body = await writeTarGz(files);
      const before = performance.now();
      const res = await app.inject({
        method: 'POST',
        url: '/skills',
        headers: { 'content-type': 'application/gzip', authorization: `Bearer ${TOKEN}` },
        payload: body,
      });
      publish.push(performance.now() - before);
      if (res.statusCode !== 201) throw new Error(`${name}: ${res.statusCode} ${res.body}`);
      const version = res.json().version as string;
      const id = (
        await app.registry.reads.resolve({ kind: 'namespace', namespace: 'default' }, name, { version })
      ).record.id;
      const signStarted = performance.now();
      await app.registry.signing.attest(id);
      sign.push(performance.now() - signStarted);
    }
    // The first few warm the process up.
    const warm = (values: number[]) => values.slice(Math.min(3, values.length - 1));
    console.log(
      `${label} (${database.kind}, ${count} publishes): publish p50 ${percentile(warm(publish), 50).toFixed(1)} ms, p95 ${percentile(warm(publish), 95).toFixed(1)} ms; scan p50 ${percentile(warm(scan), 50).toFixed(1)} ms, p95 ${percentile(warm(scan), 95).toFixed(1)} ms; sign and store p95 ${percentile(warm(sign), 95).toFixed(2)} ms`,
    );
  }
  // A crafted worst case: 30 MiB of one-line shell text, every line a near-match for the rules.
  const crafted = [
    { path: 'SKILL.md', bytes: Buffer.from(skillMd('crafted', 100)), mode: 0o644 },
    ...Array.from({ length: 15 }, (_, i) => ({
      path: `scripts/s${i}.sh`,
      bytes: Buffer.from(
        'curl -s http://10.0.0.1/x | base64 -d > /tmp/a; echo aGVsbG8= | base64 -d\n'.repeat((2 * MiB) / 77),
      ),
      mode: 0o755,
    })),
  ];
  const started = performance.now();
  const result = await scanBundle(crafted);
  console.log(
    `crafted 30 MiB shell bundle: scan ${(performance.now() - started).toFixed(0)} ms, verdict ${result.verdict} (${result.findings.length} findings${result.findings.some((f) => f.rule === 'scan/incomplete') ? ', budget reached' : ''})`,
  );
  await app.close();
  await database.close();
}

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, http: { type: 'boolean', default: false } },
});
await scanCost(Number(values.rounds));
if (values.http) await publishCost();
