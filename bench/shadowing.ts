/**
 * What the shadowing check costs a publish (issue 31): `npx tsx bench/shadowing.ts -- [options]`.
 *
 *   --skills N           synthetic skills seeded into `default` (default 100000)
 *   --team N             synthetic skills seeded into `team`, which a view layers over `default` (default 10000)
 *   --rounds R           times each description is checked (default 5)
 *   --publishes P        publishes timed with the check and as many without it (default 200)
 *   --ingest-rounds R    rounds of 80 publishes by 8 concurrent publishers, each way (default 5)
 *   --database-url URL   PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME the database created and dropped there (default skillreg_bench_shadowing)
 *   --keep / --reuse     keep the seeded database / reuse one seeded before (no reseed)
 *
 * In one process, on the registry's own services (openRegistry), after the `latest` search index of
 * both namespaces is built. The rewordings of test/fixtures/shadowing-pairs.json are planted among the
 * synthetic skills, one side of each pair as a published skill: checking the other side says whether
 * the check still finds it among 100,000, and how long a check of a real description takes. The
 * synthetic descriptions (bench/seed.ts) share one template, so every skill is a candidate for every
 * other: the worst case for the comparisons. Then publishes of new 4 KB skills, alternating between a
 * write service with the check and one without: the difference is what the check costs a publish,
 * one at a time and as 8 concurrent publishers (the ingest rate of `npm run bench`, here in-process).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { BundleFile } from '../src/bundle/types.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { openRegistry } from '../src/services/registry.js';
import { SHADOWING_RULE, ShadowingService } from '../src/services/shadowing.js';
import { SkillWriteService } from '../src/services/skill-writes.js';
import { BENCH_DATABASE_URL } from './processes.js';
import { seedSkills, syntheticSkill } from './seed.js';

const { values: args } = parseArgs({
  options: {
    skills: { type: 'string', default: '100000' },
    team: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    publishes: { type: 'string', default: '200' },
    'ingest-rounds': { type: 'string', default: '5' },
    'database-url': { type: 'string', default: BENCH_DATABASE_URL },
    'database-name': { type: 'string', default: 'skillreg_bench_shadowing' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const skills = Number(args.skills);
const teamSkills = Number(args.team);
const rounds = Number(args.rounds);
const publishes = Number(args.publishes);
const ingestRounds = Number(args['ingest-rounds']);
const PUBLISHERS = 8;
const INGEST_ROUND = 80;
const VIEW = 'fleet';

interface Pair {
  a: string;
  b: string;
}
const PAIRS = JSON.parse(
  readFileSync(new URL('../test/fixtures/shadowing-pairs.json', import.meta.url), 'utf8'),
) as { nearDuplicates: Pair[]; merelyRelated: Pair[] };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

const admin = new pg.Client({ connectionString: args['database-url'] });
await admin.connect();
const url = new URL(args['database-url']!);
url.pathname = `/${args['database-name']}`;
const databaseUrl = url.toString();

const skillFile = (name: string, description: string): BundleFile[] => [
  {
    path: 'SKILL.md',
    bytes: Buffer.from(
      `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n# ${name}\n\nFollow the steps.\n`,
    ),
    mode: 0o644,
  },
];

if (!args.reuse) {
  await admin.query(`drop database if exists ${args['database-name']} with (force)`);
  await admin.query(`create database ${args['database-name']}`);
  const database = await openDatabase({ url: databaseUrl });
  await database.migrate();
  const started = performance.now();
  await seedSkills(database, { count: skills, archives: true });
  await seedSkills(database, { count: teamSkills, start: skills, namespace: 'team', archives: true });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`insert into views (name, layers) values ($1, $2)`, [VIEW, ['default', 'team']]);
  await client.end();
  await database.close();
  process.stderr.write(`[bench] seeded in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

const config = loadConfig({
  DATABASE_URL: databaseUrl,
  SKILLREG_SEED_DIR: '',
  LOG_LEVEL: 'silent',
  SKILLREG_ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
});
const database = await openDatabase({ url: databaseUrl });
const registry = await openRegistry({ config, database });
const run = Date.now().toString(36);
try {
  // One side of every pair published among the synthetic skills (the same ones again with --reuse).
  for (const [at, pair] of PAIRS.nearDuplicates.entries())
    await registry.writes.publishUpload(
      { kind: 'files', files: skillFile(`planted-${at}`, pair.a) },
      { actor: 'bench' },
    );
  const started = performance.now();
  await registry.search.warm();
  const shadowing = new ShadowingService(registry.search, {
    views: () => registry.repositories.views.list(),
    state: registry.cache.state,
  });
  await shadowing.findings('team', { name: 'warm', description: 'Warm the team index up.' });
  process.stderr.write(`[bench] indexes built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const sizes = registry.search.indexStats('default');
  if (sizes)
    console.log(`index of default: ${sizes.slots} slots, ${sizes.terms} terms, ${sizes.postings} postings`);

  const timed = async (namespace: string, descriptions: string[]) => {
    const times: number[] = [];
    const cpu = process.cpuUsage();
    for (let round = 0; round < rounds; round++) {
      for (const description of descriptions) {
        const before = performance.now();
        await shadowing.findings(namespace, { name: `subject-${run}`, description });
        times.push(performance.now() - before);
      }
    }
    const used = process.cpuUsage(cpu);
    return { times, cpuMs: (used.user + used.system) / 1000 / times.length };
  };
  const report = (label: string, result: { times: number[]; cpuMs: number }) =>
    console.log(
      `${label}: p50 ${ms(percentile(result.times, 50))}, p95 ${ms(percentile(result.times, 95))}, ` +
        `CPU ${ms(result.cpuMs)} a check (${result.times.length} checks)`,
    );

  // Recall among 100,000: every reworded side names its planted twin.
  let found = 0;
  for (const [at, pair] of PAIRS.nearDuplicates.entries()) {
    const findings = await shadowing.findings('default', { name: `subject-${run}`, description: pair.b });
    if (findings.some((finding) => finding.detail.includes(`'planted-${at}'`))) found += 1;
    else console.log(`  missed: planted-${at} for "${pair.b}"`);
  }
  console.log(`recall among ${skills} skills: ${found} of ${PAIRS.nearDuplicates.length} rewordings found`);

  const real = [
    ...PAIRS.nearDuplicates.map((pair) => pair.b),
    ...PAIRS.merelyRelated.flatMap((pair) => [pair.a, pair.b]),
  ];
  const synthetic = Array.from({ length: 100 }, (_, k) => {
    const text = syntheticSkill(skills + teamSkills + k).text;
    return JSON.parse(/description: (".*")\n/.exec(text)![1]!) as string;
  });
  report(`check, real descriptions, default (${skills})`, await timed('default', real));
  report(
    `check, real descriptions, team (${teamSkills}) in view '${VIEW}' over default`,
    await timed('team', real),
  );
  report(
    `check, synthetic descriptions (every skill a candidate), default`,
    await timed('default', synthetic),
  );

  // Publishes of new 5 KB skills with and without the check, alternating.
  const plain = new SkillWriteService(
    registry.repositories.skills,
    config.limits,
    registry.scanning,
    registry.signing,
  );
  const checked = new SkillWriteService(
    registry.repositories.skills,
    config.limits,
    registry.scanning,
    registry.signing,
    shadowing,
  );
  const firstNew = skills + teamSkills + 1_000 + (Date.now() % 1_000_000) * 10;
  const times = { with: [] as number[], without: [] as number[] };
  const cpu = { with: 0, without: 0 };
  let flagged = 0;
  for (let k = 0; k < publishes * 2; k++) {
    // Skills no earlier run published (their names hold the index).
    const { text } = syntheticSkill(firstNew + k);
    const withCheck = k % 2 === 0;
    const cpuBefore = process.cpuUsage();
    const before = performance.now();
    const result = await (withCheck ? checked : plain).publishUpload(
      { kind: 'markdown', bytes: Buffer.from(text) },
      { actor: 'bench' },
    );
    const elapsed = performance.now() - before;
    const used = process.cpuUsage(cpuBefore);
    if (k < 10) continue; // warm-up
    times[withCheck ? 'with' : 'without'].push(elapsed);
    cpu[withCheck ? 'with' : 'without'] += (used.user + used.system) / 1000;
    if (result.scan.findings.some((finding) => finding.rule === SHADOWING_RULE)) flagged += 1;
  }
  for (const side of ['without', 'with'] as const) {
    console.log(
      `publish ${side} the check: p50 ${ms(percentile(times[side], 50))}, p95 ${ms(percentile(times[side], 95))}, ` +
        `CPU ${ms(cpu[side] / times[side].length)} a publish (${times[side].length} publishes)`,
    );
  }
  console.log(`publishes with the check that got a finding: ${flagged} of ${times.with.length}`);

  // Ingest as `npm run bench` measures it (8 concurrent publishers), rounds alternating between the two.
  let next = firstNew + publishes * 2;
  const rates = { with: [] as number[], without: [] as number[] };
  for (let round = 0; round < ingestRounds * 2; round++) {
    const side = round % 2 === 0 ? 'with' : 'without';
    const service = side === 'with' ? checked : plain;
    let left = INGEST_ROUND;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: PUBLISHERS }, async () => {
        while (left > 0) {
          left -= 1;
          const { text } = syntheticSkill(next++);
          await service.publishUpload({ kind: 'markdown', bytes: Buffer.from(text) }, { actor: 'bench' });
        }
      }),
    );
    rates[side].push(INGEST_ROUND / ((performance.now() - started) / 1000));
  }
  for (const side of ['without', 'with'] as const)
    console.log(
      `ingest ${side} the check (${PUBLISHERS} publishers, ${ingestRounds} rounds of ${INGEST_ROUND}): ` +
        `median ${percentile(rates[side], 50).toFixed(0)} skills/s (${rates[side].map((rate) => rate.toFixed(0)).join(', ')})`,
    );
} finally {
  await registry.close();
  await database.close();
  if (!args.keep) await admin.query(`drop database if exists ${args['database-name']} with (force)`);
  await admin.end();
}
