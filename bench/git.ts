/**
 * The git faces and marketplaces (issue 30): `npm run bench:git -- [options]`.
 *
 *   --sizes LIST         view sizes in skills, comma-separated (default 1000,10000)
 *   --clones N           clones of single-skill repositories measured per size (default 40)
 *   --database-url URL   PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME the database created and dropped there for each size (default skillreg_bench_git)
 *
 * For each size: N synthetic skills seeded into one namespace (stored as before issue 30: without their
 * computed installed identity, which the service computes once), a view over it, and the service started
 * as `npm start` starts it. Then, against the view: marketplace.json cold (identities computed and
 * stored) and warm (200 and 304), plugins.git cold (built) and warm (`git clone --depth 1` and
 * `ls-remote`), clones of single-skill repositories (each built on first ask, then again from the
 * cache), a publish's added cost, and the service's RSS after each step.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { installedVersion } from '../src/services/installed-versions.js';
import { BENCH_DATABASE_URL, buildForStart, freePort, startArguments } from './processes.js';
import { seedSkills, syntheticSkill } from './seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const run = promisify(execFile);
const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    clones: { type: 'string', default: '40' },
    'database-url': {
      type: 'string',
      default: BENCH_DATABASE_URL,
    },
    'database-name': { type: 'string', default: 'skillreg_bench_git' },
  },
});

const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return line ? Math.round(Number(line[1]) / 1024) : 0;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}
async function folderBytes(directory: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}
const git = (cwd: string, ...gitArgs: string[]) =>
  run('git', gitArgs, {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
    maxBuffer: 1 << 26,
  });

async function startService(databaseUrl: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, startArguments(ROOT), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      SKILLREG_SEED_DIR: '',
      SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
      SKILLREG_RATE_LIMIT_READS: '0',
      SKILLREG_RATE_LIMIT_WRITES: '0',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 900; tries++) {
    if (child.exitCode !== null) throw new Error('service exited');
    if (
      await fetch(`${base}/readyz`).then(
        (res) => res.ok,
        () => false,
      )
    )
      return { base, child };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('service did not start');
}

const results: Record<string, Record<string, number | string>> = {};
buildForStart(ROOT);
const admin = new pg.Client({ connectionString: args['database-url'] });
await admin.connect();
for (const size of args.sizes!.split(',').map(Number)) {
  const name = args['database-name']!;
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  const url = new URL(args['database-url']!);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  await database.migrate();
  await seedSkills(database, { count: size, namespace: 'team', archives: true });
  await database.db.execute(`insert into views (name, layers) values ('curated', '{team}')`);
  await database.close();
  const service = await startService(url.toString());
  const view = `${service.base}/views/curated`;
  const row: Record<string, number | string> = {
    skills: size,
    'rss at start MiB': rssMiB(service.child.pid!),
  };
  const work = await mkdtemp(path.join(os.tmpdir(), 'skillreg-bench-git-'));
  try {
    const [cold, coldMs] = await timed(() => fetch(`${view}/marketplace.json`));
    const body = await cold.arrayBuffer();
    row['marketplace.json cold ms'] = Math.round(coldMs);
    row['marketplace.json bytes'] = body.byteLength;
    const warms: number[] = [];
    for (let i = 0; i < 10; i++)
      warms.push((await timed(async () => (await fetch(`${view}/marketplace.json`)).arrayBuffer()))[1]);
    row['marketplace.json warm p95 ms'] = Math.round(percentile(warms, 95));
    const etag = cold.headers.get('etag')!;
    const notModified: number[] = [];
    for (let i = 0; i < 10; i++)
      notModified.push(
        (await timed(() => fetch(`${view}/marketplace.json`, { headers: { 'if-none-match': etag } })))[1],
      );
    row['marketplace.json 304 p95 ms'] = Math.round(percentile(notModified, 95) * 10) / 10;
    row['rss after marketplace MiB'] = rssMiB(service.child.pid!);

    const [, pluginsCold] = await timed(() =>
      git(work, 'clone', '--quiet', '--depth', '1', `${view}/git/plugins.git`, 'p1'),
    );
    row['plugins.git clone cold s'] = Math.round(pluginsCold / 100) / 10;
    const [, pluginsWarm] = await timed(() =>
      git(work, 'clone', '--quiet', '--depth', '1', `${view}/git/plugins.git`, 'p2'),
    );
    row['plugins.git clone warm s'] = Math.round(pluginsWarm / 100) / 10;
    row['plugins.git checkout MiB'] = Math.round((await folderBytes(path.join(work, 'p2'))) / 1048576);
    // One publish into the view's namespace, then plugins.git again: the rebuild grafts every other plugin.
    const published = syntheticSkill(size + 1);
    const res = await fetch(`${service.base}/namespaces/team/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/markdown' },
      body: published.text,
    });
    if (res.status !== 201) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
    const [, afterPublish] = await timed(() =>
      git(work, 'clone', '--quiet', '--depth', '1', `${view}/git/plugins.git`, 'p3'),
    );
    row['plugins.git clone after a publish s'] = Math.round(afterPublish / 100) / 10;
    const lsRemote: number[] = [];
    for (let i = 0; i < 10; i++)
      lsRemote.push((await timed(() => git(work, 'ls-remote', `${view}/git/plugins.git`)))[1]);
    row['plugins.git ls-remote p95 ms'] = Math.round(percentile(lsRemote, 95));
    row['rss after plugins.git MiB'] = rssMiB(service.child.pid!);

    const clones = Number(args.clones);
    const coldClones: number[] = [];
    const warmClones: number[] = [];
    for (let i = 0; i < clones; i++) {
      const skill = syntheticSkill(Math.floor((i * size) / clones)).name;
      const repository = `${view}/git/skills/${skill}.git`;
      coldClones.push(
        (await timed(() => git(work, 'clone', '--quiet', '--depth', '1', repository, `s${i}`)))[1],
      );
      warmClones.push(
        (await timed(() => git(work, 'clone', '--quiet', '--depth', '1', repository, `w${i}`)))[1],
      );
    }
    row['skill clone first p95 ms'] = Math.round(percentile(coldClones, 95));
    row['skill clone again p95 ms'] = Math.round(percentile(warmClones, 95));
    row['rss after clones MiB'] = rssMiB(service.child.pid!);
  } finally {
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
    await rm(work, { recursive: true, force: true });
  }
  results[String(size)] = row;
  console.log(JSON.stringify(row));
}
await admin.query(`drop database if exists ${args['database-name']} with (force)`);
await admin.end();

// What a publish adds: the installed identity (skills-lock hash, git tree and commit) of a typical skill.
const sample = syntheticSkill(7);
const files = [
  { path: 'SKILL.md', bytes: Buffer.from(sample.text), mode: 0o644 },
  { path: 'references/guide.md', bytes: Buffer.alloc(16_384, 'x'), mode: 0o644 },
  { path: 'scripts/run.sh', bytes: Buffer.from('#!/bin/sh\necho run\n'), mode: 0o755 },
];
const rounds = 2000;
const started = performance.now();
for (let i = 0; i < rounds; i++) {
  installedVersion({ name: sample.name, version: '1.0.0', description: 'd', createdAt: new Date(0) }, files);
}
console.log(
  JSON.stringify({
    'installed identity per publish µs': Math.round(((performance.now() - started) * 1000) / rounds),
  }),
);
