/**
 * Reads through a view against the plain namespace path (issue 14): `npm run bench:views -- [options]`.
 *
 *   --per-layer N        skills seeded into each of the three layers (default 10000)
 *   --duration S         seconds per throughput run after a 1 s warm-up (default 5)
 *   --rounds R           runs per scenario and side, alternating; the median counts (default 3)
 *   --database-url URL   PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME the database created and dropped there (default skillreg_bench_views)
 *   --keep / --reuse     keep the seeded database / reuse one seeded before (no reseed)
 *
 * Layers, lowest first: org, team, project, N skills each. The team holds the org's last fifth of names
 * (they override it) and as many of its own; the project likewise over the team. The service runs as
 * a child process the way `npm start` runs it (compiled by its prestart, with its node flags); autocannon
 * drives it from here. Each scenario is measured on the view (`/views/fleet/...`) and on the flat
 * namespace path (`/namespaces/team/...`) for the same skills, alternating; the ratio is flat / view
 * CPU time per request (above 1: the view costs less). Then, with the read cache off, `/prompt?budget=`
 * of the view with a different budget each request (4 clients): its p95.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import {
  BENCH_DATABASE_URL,
  buildForStart,
  cpuTicks,
  freePort,
  startArguments,
  TICK_MICROS,
} from './processes.js';
import { seedSkills, syntheticSkill } from './seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    'per-layer': { type: 'string', default: '10000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'database-url': {
      type: 'string',
      default: BENCH_DATABASE_URL,
    },
    'database-name': { type: 'string', default: 'skillreg_bench_views' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const perLayer = Number(args['per-layer']);
const duration = Number(args.duration);
const rounds = Number(args.rounds);
const LAYERS = ['org', 'team', 'project'] as const;
const VIEW = 'fleet';
/** Where each layer's names start: a fifth of each layer's names are the layer below's last fifth. */
const starts = [0, Math.floor(perLayer * 0.8), Math.floor(perLayer * 1.6)];

const admin = new pg.Client({ connectionString: args['database-url'] });
await admin.connect();
const url = new URL(args['database-url']!);
url.pathname = `/${args['database-name']}`;
const databaseUrl = url.toString();

if (!args.reuse) {
  await admin.query(`drop database if exists ${args['database-name']} with (force)`);
  await admin.query(`create database ${args['database-name']}`);
  const database = await openDatabase({ url: databaseUrl });
  await database.migrate();
  const started = performance.now();
  for (const [at, namespace] of LAYERS.entries()) {
    await seedSkills(database, { count: perLayer, start: starts[at], namespace, archives: true });
    process.stderr.write(`[bench] seeded ${perLayer} skills into ${namespace}\n`);
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`insert into views (name, layers) values ($1, $2)`, [VIEW, [...LAYERS]]);
  await client.end();
  await database.close();
  process.stderr.write(`[bench] seeded in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Service {
  base: string;
  child: ChildProcess;
}

let built = false;

/** The service as `npm start` starts it (compiled first, then its command from package.json). */
async function startService(env: Record<string, string>): Promise<Service> {
  if (!built) buildForStart(ROOT);
  built = true;
  const port = await freePort();
  const child = spawn(process.execPath, startArguments(ROOT), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      SKILLREG_SEED_DIR: '',
      SKILLREG_RATE_LIMIT_READS: '0',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited:\n${errors}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { base, child };
    if (Date.now() > deadline) throw new Error(`service did not start:\n${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface Run {
  rps: number;
  cpuMicros: number;
  p95: number;
}

async function load(
  service: Service,
  next: () => string,
  options: { headers?: (path: string) => Record<string, string>; seconds: number; connections: number },
): Promise<Run> {
  const requests: Request[] = [
    {
      method: 'GET',
      setupRequest: (request) => {
        const path = next();
        return { ...request, path, headers: { ...request.headers, ...(options.headers?.(path) ?? {}) } };
      },
    },
  ];
  const times: number[] = [];
  const before = cpuTicks(service.child.pid!);
  const instance = autocannon({
    url: service.base,
    connections: options.connections,
    duration: options.seconds,
    requests,
    timeout: 60,
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, time: number) => {
    if (status >= 400) throw new Error(`status ${status}`);
    times.push(time);
  });
  const result = await instance;
  const ticks = cpuTicks(service.child.pid!) - before;
  times.sort((a, b) => a - b);
  return {
    rps: times.length / Math.max(result.duration, 0.001),
    cpuMicros: (ticks * TICK_MICROS) / Math.max(times.length, 1),
    p95: percentile(times, 95),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Names every layer path can serve: the team's own (the view resolves them from team or project). */
const teamNames = Array.from(
  { length: 500 },
  (_, at) => syntheticSkill(starts[1]! + ((at * 7) % perLayer)).name,
);
let cursor = 0;
const nextName = () => teamNames[cursor++ % teamNames.length]!;

const results: string[] = [];
try {
  const service = await startService({});
  try {
    // ETags of each content URL, for the 304 scenarios.
    const etags = new Map<string, string>();
    for (const prefix of [`/views/${VIEW}`, '/namespaces/team']) {
      for (const name of teamNames) {
        const path = `${prefix}/skills/${name}/content`;
        const res = await fetch(`${service.base}${path}`);
        await res.arrayBuffer();
        etags.set(path, res.headers.get('etag')!);
      }
    }
    const scenarios: { label: string; path: (prefix: string) => string; conditional?: boolean }[] = [
      { label: 'layer 2 content, 200', path: (prefix) => `${prefix}/skills/${nextName()}/content` },
      {
        label: 'layer 2 content, 304 revalidation',
        path: (prefix) => `${prefix}/skills/${nextName()}/content`,
        conditional: true,
      },
      { label: 'catalogue page (limit=100), 200', path: (prefix) => `${prefix}/skills?limit=100` },
    ];
    results.push(
      '| scenario | view req/s | flat req/s | view CPU µs/req | flat CPU µs/req | flat / view (CPU) | view p95 ms | flat p95 ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const scenario of scenarios) {
      const view: Run[] = [];
      const flat: Run[] = [];
      const headers = scenario.conditional
        ? (path: string) => ({ 'if-none-match': etags.get(path) ?? '' })
        : undefined;
      for (let round = 0; round < rounds; round++) {
        // Each side goes first every other round, so neither always runs on a warmer process.
        const sides = [
          [`/views/${VIEW}`, view],
          ['/namespaces/team', flat],
        ] as const;
        for (const [prefix, runs] of round % 2 === 0 ? sides : [...sides].reverse()) {
          await load(service, () => scenario.path(prefix), { headers, seconds: 1, connections: 10 });
          runs.push(
            await load(service, () => scenario.path(prefix), { headers, seconds: duration, connections: 10 }),
          );
        }
      }
      const v = {
        rps: median(view.map((r) => r.rps)),
        cpu: median(view.map((r) => r.cpuMicros)),
        p95: median(view.map((r) => r.p95)),
      };
      const f = {
        rps: median(flat.map((r) => r.rps)),
        cpu: median(flat.map((r) => r.cpuMicros)),
        p95: median(flat.map((r) => r.p95)),
      };
      results.push(
        `| ${scenario.label} | ${v.rps.toFixed(0)} | ${f.rps.toFixed(0)} | ${v.cpu.toFixed(1)} | ${f.cpu.toFixed(1)} | ${(f.cpu / v.cpu).toFixed(2)}x | ${v.p95.toFixed(1)} | ${f.p95.toFixed(1)} |`,
      );
      process.stderr.write(`[bench] ${scenario.label} done\n`);
    }
  } finally {
    service.child.kill('SIGTERM');
  }

  const uncached = await startService({ SKILLREG_CACHE_MB: '0' });
  try {
    let budget = 3000;
    const next = () => `/views/${VIEW}/prompt?budget=${budget++}`;
    await load(uncached, next, { seconds: 2, connections: 4 });
    const prompt = await load(uncached, next, { seconds: Math.max(duration, 10), connections: 4 });
    const flatPrompt = await load(uncached, () => `/namespaces/team/prompt?budget=${budget++}`, {
      seconds: Math.max(duration, 10),
      connections: 4,
    });
    results.push(
      '',
      '| cache off, 4 clients, a different budget each request | req/s | p95 ms |',
      '| --- | ---: | ---: |',
      `| view of ${LAYERS.length} layers (${LAYERS.length * perLayer} skills), /prompt?budget= | ${prompt.rps.toFixed(0)} | ${prompt.p95.toFixed(1)} |`,
      `| one namespace (${perLayer} skills), /prompt?budget= | ${flatPrompt.rps.toFixed(0)} | ${flatPrompt.p95.toFixed(1)} |`,
    );
  } finally {
    uncached.child.kill('SIGTERM');
  }
  console.log(
    `## Views: ${LAYERS.length} layers of ${perLayer} skills (PostgreSQL, ${rounds} rounds of ${duration} s)\n`,
  );
  console.log(results.join('\n'));
} finally {
  if (!args.keep)
    await admin.query(`drop database if exists ${args['database-name']} with (force)`).catch(() => {});
  await admin.end();
}
