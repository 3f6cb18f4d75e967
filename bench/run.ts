/**
 * The read-path benchmark (issue 6): `npm run bench -- [options]`.
 *
 *   --backend pg|pglite     database (default pg: a dedicated database skillreg_bench, dropped after)
 *   --skills N              skills seeded (default 10000)
 *   --duration S            seconds per measured run (default 5; each run has a 1 s warm-up before it)
 *   --rounds R              throughput runs per scenario and process, alternating; the median counts (default 3)
 *   --processes P           throughput runs: service and baseline processes measured per side (default 2;
 *                           PostgreSQL only, PGlite runs one)
 *   --connections C         concurrent connections for throughput runs (default 10)
 *   --latency-connections C concurrent connections for latency runs (default 4)
 *   --soak S                seconds of mixed reads while RSS is sampled (default 30)
 *   --ingest N              skills published over HTTP by 8 concurrent publishers (default 400)
 *   --database-url URL      PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME    (pg) the bench database created and dropped there (default skillreg_bench); give
 *                           concurrent benches on one server different names
 *   --runtime dist|tsx      dist (default): compile with tsconfig.build.json and run `node dist/server.js`
 *                           as the container image and `npm start` do; tsx: run the TypeScript through tsx
 *                           as `skillreg serve` does
 *   --node-options FLAGS    extra node flags for the service, e.g. --max-old-space-size=192
 *   --out FILE              also write the results as JSON
 *   --keep                  keep the bench database (pg) or data folder (pglite)
 *   --reuse                 (pg) keep an existing bench database that already holds the skills: no reseed
 *   --only LIST             run only these parts: throughput,latency,soak,ingest,replicas,uncached
 *   --throughput-warm-up S  seconds of load over every throughput scenario before the measured runs (default 60)
 *   --pin                   throughput runs: pin the server measured to the last CPU, this process to the others
 *
 * What runs where: this process seeds the database, then starts the service (compiled, as in the
 * container image, or through tsx) and a bare Fastify baseline (bench/baseline.ts) as child processes,
 * and drives them with autocannon from here. The machine has few cores, so the load generator shares
 * them with the server under test; the baseline is measured under exactly the same conditions, one run
 * after the other, which is what makes the ratio meaningful. With --pin (two CPUs or more, taskset)
 * the throughput runs keep the server measured, service or baseline, on the last CPU and the load
 * generator on the others, so the two never share a core (docs/PERFORMANCE.md: what it changed).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import pg from 'pg';
import { writeTarGz } from '../src/bundle/archive-write.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { openRegistry } from '../src/services/registry.js';
import {
  BENCH_DATABASE_URL,
  cpuTicks,
  freePort,
  pinProcess,
  postgresCpuTicks,
  TICK_MICROS,
} from './processes.js';
import { seedSkills, syntheticSkill, TOPICS } from './seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'pg' },
    skills: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    processes: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    'latency-connections': { type: 'string', default: '4' },
    soak: { type: 'string', default: '30' },
    ingest: { type: 'string', default: '400' },
    'database-name': { type: 'string', default: 'skillreg_bench' },
    'database-url': {
      type: 'string',
      default: BENCH_DATABASE_URL,
    },
    runtime: { type: 'string', default: 'dist' },
    'node-options': { type: 'string', default: '' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    only: { type: 'string', default: 'throughput,latency,soak,ingest,replicas,uncached' },
    pin: { type: 'boolean', default: false },
    'throughput-warm-up': { type: 'string', default: '60' },
  },
});
const BENCH_DATABASE = args['database-name']!;
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(BENCH_DATABASE)) {
  process.stderr.write(
    `--database-name must be a lowercase SQL identifier (a-z, 0-9, _), not '${BENCH_DATABASE}'\n`,
  );
  process.exit(2);
}
const parts = new Set(args.only!.split(',').map((part) => part.trim()));
const wants = (part: string) => parts.has(part);

const backend = args.backend === 'pglite' ? 'pglite' : 'pg';
const skillCount = Number(args.skills);
const duration = Number(args.duration);
const rounds = Math.max(1, Number(args.rounds));
/**
 * Processes a side for the throughput runs. Processes of one build differ in CPU per request by up to
 * a fifth (docs/PERFORMANCE.md), so one process a side is one draw; the figure is the median over
 * every run of every process. PGlite is embedded in one process: one a side there.
 */
const throughputProcesses = backend === 'pglite' ? 1 : Math.max(1, Number(args.processes));
/** Seconds of load spread over every throughput scenario, both sides, before any is measured. */
const throughputWarmUp = Math.max(0, Number(args['throughput-warm-up']));
const connections = Number(args.connections);
const latencyConnections = Number(args['latency-connections']);
const soakSeconds = Number(args.soak);
const ingestCount = Number(args.ingest);
/** Publishes made before the ingest run is timed (see there). */
const INGEST_WARM_UP = 20;

// ---------------------------------------------------------------------------------------------------
// Processes

interface Service {
  name: string;
  base: string;
  child: ChildProcess;
  output: () => string;
  /** Seconds from the process's start until its readiness check answered 200. */
  readySeconds: number;
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith('SKILLREG_') || key === 'DATABASE_URL') continue;
    if (key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  return env;
}

async function startProcess(name: string, argv: string[], env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    argv.map((arg) => (arg === '$PORT' ? String(port) : arg)),
    {
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        ...Object.fromEntries(
          Object.entries(env).map(([key, value]) => [key, value.replace('$PORT', String(port))]),
        ),
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const service: Service = {
    name,
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    readySeconds: 0,
  };
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output}`);
    try {
      const isBaseline = name.startsWith('baseline');
      const res = await fetch(`${service.base}${isBaseline ? '/__ready' : '/readyz'}`);
      if (res.status === 200 || (isBaseline && res.status === 404)) {
        service.readySeconds = (performance.now() - started) / 1000;
        return service;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start:\n${output}`);
    await sleep(200);
  }
}

/**
 * The node flags the service runs with, as the image's CMD and `npm start` give them (Dockerfile,
 * package.json): a smaller young generation keeps RSS within budget (docs/DEPLOY.md).
 */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4'];

/** How the service is started: compiled JavaScript (the image's way) or TypeScript through tsx. */
let serviceArgv = [...SERVICE_NODE_FLAGS, '--import', 'tsx', 'src/server.ts'];

/**
 * Compiles src/ with tsconfig.build.json into a scratch folder laid out like the repository (dist/
 * next to migrations/ and node_modules/), so `node dist/server.js` runs exactly as in the image.
 */
async function buildService(scratch: string): Promise<void> {
  const dir = path.join(scratch, 'build');
  await mkdir(dir, { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  await symlink(path.join(ROOT, 'migrations'), path.join(dir, 'migrations'));
  await copyFile(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  const tsc = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      path.join(dir, 'dist'),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  tsc.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => tsc.once('exit', resolve));
  const server = path.join(dir, 'dist', 'server.js');
  if (!existsSync(server)) throw new Error(`tsc produced no dist/server.js:\n${output}`);
  if (code !== 0)
    log(`tsc reported type errors (JavaScript was emitted and is used):\n${output.slice(0, 2000)}`);
  serviceArgv = [...SERVICE_NODE_FLAGS, server];
}

function startService(name: string, database: DatabaseTarget, extra: Record<string, string> = {}) {
  const nodeFlags = args['node-options']!.split(/\s+/).filter(Boolean);
  // The defaults first (serviceArgv starts with them), so --node-options can override them.
  const [defaults, rest] = [
    serviceArgv.slice(0, SERVICE_NODE_FLAGS.length),
    serviceArgv.slice(SERVICE_NODE_FLAGS.length),
  ];
  return startProcess(name, [...defaults, ...nodeFlags, ...rest], {
    ...database.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SKILLREG_SEED_DIR: '',
    SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
    // As every replica behind a load balancer is configured (docs/DEPLOY.md): links name one base URL.
    SKILLREG_PUBLIC_URL: 'http://127.0.0.1:$PORT',
    // Ingest is 8 publishers on one token: the default write limit (600 a minute per token) would 429.
    SKILLREG_RATE_LIMIT_WRITES: '0',
    ...extra,
  });
}

async function stop(service: Service | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null) return;
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Clock ticks of user and system time a process has used (/proc/<pid>/stat fields 14 and 15). */

function rssMiB(service: Service, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
  const kib = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return kib / 1024;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------------
// Database

interface DatabaseTarget {
  env: Record<string, string>;
  open: () => ReturnType<typeof openDatabase>;
  drop: () => Promise<void>;
  describe: string;
  /** The database already holds the skills (--reuse). */
  seeded?: boolean;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function createTarget(): Promise<DatabaseTarget> {
  if (backend === 'pglite') {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'skillreg-bench-'));
    return {
      env: { SKILLREG_DATA_DIR: dataDir },
      open: () => openDatabase({ dataDir }),
      drop: () => rm(dataDir, { recursive: true, force: true }),
      describe: `PGlite (embedded, ${dataDir})`,
    };
  }
  const adminUrl = args['database-url']!;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]!
    .server_version;
  const exists =
    (await admin.query('select 1 from pg_database where datname = $1', [BENCH_DATABASE])).rowCount === 1;
  let seeded = false;
  if (args.reuse && exists) {
    const probe = new pg.Client({ connectionString: withDatabase(adminUrl, BENCH_DATABASE) });
    await probe.connect();
    const count = await probe
      .query<{ n: string }>('select count(*) as n from skills')
      .then((result) => Number(result.rows[0]!.n))
      .catch(() => 0);
    await probe.end();
    seeded = count >= skillCount;
  }
  if (!seeded) {
    await admin.query(`drop database if exists ${BENCH_DATABASE} with (force)`);
    await admin.query(`create database ${BENCH_DATABASE}`);
  }
  await admin.end();
  const url = withDatabase(adminUrl, BENCH_DATABASE);
  return {
    seeded,
    env: { DATABASE_URL: url },
    open: () => openDatabase({ url }),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${BENCH_DATABASE} with (force)`);
      await client.end();
    },
    describe: `PostgreSQL ${version} (database ${BENCH_DATABASE} on ${new URL(adminUrl).host})`,
  };
}

// ---------------------------------------------------------------------------------------------------
// Load

interface Run {
  rps: number;
  /** CPU time (user + system) the server process spent per request, when measured. */
  cpuMicros?: number;
  p50: number;
  p95: number;
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function load(
  base: string,
  options: {
    path: string;
    headers?: Record<string, string>;
    connections: number;
    duration?: number;
    amount?: number;
    next?: () => string;
    warmup?: boolean;
    /** The server's pid: its CPU time per request is measured too. */
    pid?: number;
    /** Called on autocannon's once-a-second tick (timers of this busy process may fire late). */
    onTick?: () => void;
  },
): Promise<Run> {
  if (options.warmup !== false && options.amount === undefined) {
    await load(base, { ...options, duration: 1, warmup: false });
  }
  const requests: Request[] | undefined = options.next
    ? [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: options.next!() }),
        },
      ]
    : undefined;
  const times: number[] = [];
  const cpuBefore = options.pid ? cpuTicks(options.pid) : 0;
  const instance = autocannon({
    url: `${base}${options.path}`,
    connections: options.connections,
    duration: options.duration ?? duration,
    amount: options.amount,
    headers: options.headers,
    requests,
    timeout: 60,
  });
  if (options.onTick) instance.on('tick', options.onTick);
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    times.push(responseTime);
  });
  const result = await instance;
  const cpuTicksUsed = options.pid ? cpuTicks(options.pid) - cpuBefore : 0;
  times.sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
    statuses[code] = Number(count);
  return {
    rps: times.length / Math.max(result.duration, 0.001),
    ...(options.pid ? { cpuMicros: (cpuTicksUsed * TICK_MICROS) / Math.max(times.length, 1) } : {}),
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    p99: percentile(times, 99),
    requests: times.length,
    statuses,
    errors: result.errors,
  };
}

/** The run with the median throughput. */
function median(runs: Run[]): Run {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

/** The median of some numbers (the mean of the middle two for an even count). */
function middle(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

/** A side's runs summed up: the median-throughput run, with the median CPU per request of all runs. */
function sideOf(runs: Run[]): Run {
  const cpu = runs.flatMap((run) => (run.cpuMicros === undefined ? [] : [run.cpuMicros]));
  return { ...median(runs), ...(cpu.length > 0 ? { cpuMicros: middle(cpu) } : {}) };
}

function expectStatus(label: string, run: Run, status: string): void {
  const total = Object.values(run.statuses).reduce((sum, n) => sum + n, 0);
  const good = run.statuses[status] ?? 0;
  if (run.errors > 0 || good < total) {
    throw new Error(
      `${label}: expected only ${status}, got ${JSON.stringify(run.statuses)}, errors ${run.errors}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

interface Fixture {
  url: string;
  headers: Record<string, string>;
  body: string;
}

async function fixtureOf(base: string, url: string): Promise<Fixture> {
  const res = await fetch(`${base}${url}`);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const body = Buffer.from(await res.arrayBuffer());
  return {
    url,
    headers: {
      etag: res.headers.get('etag') ?? '',
      'cache-control': res.headers.get('cache-control') ?? '',
      'content-type': res.headers.get('content-type') ?? '',
    },
    body: body.toString('base64'),
  };
}

function randomInt(n: number): number {
  return Math.floor(Math.random() * n);
}

function cursorAfter(name: string): string {
  return Buffer.from(JSON.stringify({ after: name })).toString('base64url');
}

/** A search term drawn from the seed's vocabulary: one topic, or a topic and a noun. */
function searchTerm(): string {
  const topic = TOPICS[randomInt(TOPICS.length)]!;
  return Math.random() < 0.5 ? topic : `${topic} ${['pipelines', 'reports', 'dashboards'][randomInt(3)]}`;
}

/**
 * Requests written the way people ask an agent (../shared/search-eval/queries.json when present:
 * short ones, paragraphs, Chinese, typos), else task sentences built from the seed's vocabulary.
 */
const TASK_REQUESTS: string[] = (() => {
  const file = fileURLToPath(new URL('../../shared/search-eval/queries.json', import.meta.url));
  if (existsSync(file))
    return (JSON.parse(readFileSync(file, 'utf8')) as { q: string }[]).map((query) => query.q);
  return TOPICS.map((topic) => `help me set up ${topic} reports for my team and fix what is failing`);
})();

function taskRequest(): string {
  return TASK_REQUESTS[randomInt(TASK_REQUESTS.length)]!;
}

async function publishOne(base: string, bytes: Buffer): Promise<number> {
  const res = await fetch(`${base}/skills`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/gzip' },
    body: new Uint8Array(bytes),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A typical ~5 KB skill: frontmatter, a few sections of instructions, one reference file. */
async function typicalBundle(name: string, version?: string): Promise<Buffer> {
  const section = (n: number) =>
    `## Step ${n}\n\nRead the request carefully, check the inputs against the checklist in references/checklist.md, and explain each change you make. Prefer small, reviewable edits; run the project's tests before you finish and report what you ran.\n\n`;
  let body = `# ${name}\n\n`;
  for (let n = 1; body.length < 4_600; n++) body += section(n);
  const skillMd = `---\nname: ${name}\ndescription: "Use when publishing benchmark skill ${name}: a typical five-kilobyte skill with instructions and a checklist."\n${version ? `metadata:\n  version: "${version}"\n` : ''}---\n\n${body}`;
  return writeTarGz([
    { path: 'SKILL.md', bytes: Buffer.from(skillMd), mode: 0o644 },
    { path: 'references/checklist.md', bytes: Buffer.from('- inputs\n- tests\n- summary\n'), mode: 0o644 },
  ]);
}

// ---------------------------------------------------------------------------------------------------

interface Results {
  machine: Record<string, string | number>;
  backend: string;
  skills: number;
  settings: Record<string, number>;
  /** How the throughput runs placed the processes on CPUs (pinned, or left to the scheduler). */
  placement?: string;
  throughput: {
    scenario: string;
    /** The run of median throughput; its cpuMicros is the median over all runs of the side. */
    service: Run;
    baseline: Run;
    ratio: number;
    /** Each process's median CPU per request, in the order they were started. */
    serviceProcesses?: number[];
    baselineProcesses?: number[];
  }[];
  latency: { scenario: string; cache: 'on' | 'off'; run: Run }[];
  ingest?: {
    skills: number;
    seconds: number;
    perSecond: number;
    p50: number;
    p95: number;
    failures: number;
    /** CPU per publish: the service's process, and every PostgreSQL process of this machine. */
    serviceCpuMs: number;
    databaseCpuMs?: number;
    /**
     * After the ingest, one publish at a time: the first budgeted prompt after each (it renders from
     * the new snapshot, whose per-snapshot work grows with the catalogue) and a second budget of it.
     */
    promptAfterPublish: { rounds: number; first: number[]; again: number[] };
  };
  replicas?: {
    change: string;
    trials: number;
    firstRequestFresh: number;
    median: number;
    p95: number;
    max: number;
    staleAfterFresh: number;
  }[];
  memory: {
    afterWarmupMiB: number;
    /** The most RSS the process held since it started (VmHWM): the start-up reads included. */
    peakMiB: number;
    soakSeconds: number;
    soakStartMiB: number;
    soakMaxMiB: number;
    soakEndMiB: number;
    firstHalfMedianMiB: number;
    secondHalfMedianMiB: number;
    soakRps: number;
    samples: number[];
  };
  seedSeconds: number;
  /** Seconds from the service's start until GET /readyz answered 200, with and without the cache. */
  readySeconds: { cached?: number; uncached?: number };
  /** Seconds after ready until PostgreSQL ran no statement of the service for a while (PostgreSQL only). */
  startupChecksSeconds?: number;
}

function machine(): Record<string, string | number> {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  return {
    cpus: os.availableParallelism(),
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    loadAverageAtStart: os.loadavg()[0]!.toFixed(2),
  };
}

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function main(): Promise<void> {
  const results: Results = {
    machine: machine(),
    backend,
    skills: skillCount,
    settings: {
      duration,
      rounds,
      processes: throughputProcesses,
      connections,
      latencyConnections,
      soakSeconds,
      ingestCount,
      throughputWarmUp,
    },
    throughput: [],
    latency: [],
    memory: {
      afterWarmupMiB: 0,
      peakMiB: 0,
      soakSeconds,
      soakStartMiB: 0,
      soakMaxMiB: 0,
      soakEndMiB: 0,
      firstHalfMedianMiB: 0,
      secondHalfMedianMiB: 0,
      soakRps: 0,
      samples: [],
    },
    seedSeconds: 0,
    readySeconds: {},
  };
  const target = await createTarget();
  results.machine.database = target.describe;
  let service: Service | undefined;
  let baseline: Service | undefined;
  let replica: Service | undefined;
  /** The throughput runs' further processes, beyond `service` and `baseline`. */
  let extraServices: Service[] = [];
  let extraBaselines: Service[] = [];
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'skillreg-bench-fixtures-'));
  try {
    if (args.runtime !== 'tsx') {
      log('compiling the service (tsconfig.build.json) as the container image does');
      await buildService(scratch);
    }
    results.machine.runtime = `${args.runtime === 'tsx' ? 'tsx src/server.ts' : 'node dist/server.js (compiled)'} with ${[...SERVICE_NODE_FLAGS, args['node-options']].filter(Boolean).join(' ')}`;
    // --- seed
    log(`seeding ${skillCount} skills into ${target.describe}`);
    const seedStart = performance.now();
    const database = await target.open();
    await database.migrate();
    if (target.seeded) log('  reusing the seeded database (--reuse)');
    else
      await seedSkills(database, {
        count: skillCount,
        archives: true,
        onProgress: (done) => {
          if (done % 10_000 === 0 || done === skillCount) log(`  ${done} seeded`);
        },
      });
    // What a service started on these rows would otherwise do in the background while it is measured
    // (src/server.ts's start-up backfills: archives, prompt entry counts, attestations, installed
    // identities), done here before it starts. The seed stores all but the attestations, which need
    // the registry's signing key; on a database seeded by an older bench, this fills the rest.
    const registry = await openRegistry({
      config: loadConfig({
        SKILLREG_SEED_DIR: '',
        LOG_LEVEL: 'silent',
        ...target.env,
      }),
      database,
    });
    try {
      const filled = {
        archives: await registry.startupChecks.archives(),
        promptTokens: await registry.startupChecks.promptTokens(),
        attestations: await registry.startupChecks.attestations(),
        installedIdentities: await registry.startupChecks.installedIdentities(),
      };
      log(`  start-up backfills done before the service starts: ${JSON.stringify(filled)}`);
    } finally {
      await registry.close();
    }
    await database.close();
    results.seedSeconds = (performance.now() - seedStart) / 1000;

    // --- service and baseline
    service = await startService('service', target);
    results.readySeconds.cached = service.readySeconds;
    log(`  service ready (GET /readyz 200) ${service.readySeconds.toFixed(1)} s after its start`);
    if (target.env.DATABASE_URL) {
      // After ready the service checks for versions older releases stored without archives, prompt
      // counts, attestations or installed identities: statements over the whole catalogue. Measured
      // here, and waited for, so what follows measures reads and publishes, not those checks.
      results.startupChecksSeconds = await quietDatabaseAfter(target.env.DATABASE_URL);
      log(`  start-up checks kept PostgreSQL busy ${results.startupChecksSeconds.toFixed(1)} s after ready`);
    }
    const base = service.base;
    const sample = syntheticSkill(Math.floor(skillCount / 2)).name;
    const urls = {
      content: `/skills/${sample}/content`,
      file: `/skills/${sample}/files/SKILL.md?version=1.0.0`,
      catalogue: '/skills?limit=100',
    };
    const fixtures = await Promise.all(Object.values(urls).map((url) => fixtureOf(base, url)));
    const fixturesFile = path.join(scratch, 'fixtures.json');
    await writeFile(fixturesFile, JSON.stringify(fixtures));
    baseline = await startProcess(
      'baseline',
      ['--import', 'tsx', 'bench/baseline.ts', fixturesFile, '$PORT'],
      {},
    );
    const etagOf = (url: string) => fixtures.find((fixture) => fixture.url === url)!.headers.etag!;

    // --- throughput: the service against the baseline, same bytes, same settings, one after the other
    const throughputScenarios: {
      scenario: string;
      path: string;
      headers?: Record<string, string>;
      status: string;
    }[] = [
      { scenario: 'layer 2 content, 200', path: urls.content, status: '200' },
      {
        scenario: 'layer 2 content, 304 revalidation',
        path: urls.content,
        headers: { 'if-none-match': etagOf(urls.content) },
        status: '304',
      },
      { scenario: 'layer 3 file (exact version), 200', path: urls.file, status: '200' },
      {
        scenario: 'layer 3 file (exact version), 304 revalidation',
        path: urls.file,
        headers: { 'if-none-match': etagOf(urls.file) },
        status: '304',
      },
      { scenario: 'catalogue page (limit=100), 200', path: urls.catalogue, status: '200' },
      {
        scenario: 'catalogue page (limit=100), 304 revalidation',
        path: urls.catalogue,
        headers: { 'if-none-match': etagOf(urls.catalogue) },
        status: '304',
      },
    ];
    const cpus = os.availableParallelism();
    const serverCpu = String(cpus - 1);
    const allCpus = `0-${cpus - 1}`;
    if (wants('throughput') && throughputProcesses > 1) {
      log(`throughput: ${throughputProcesses} processes a side`);
      for (let index = 2; index <= throughputProcesses; index++) {
        extraServices.push(await startService(`service-${index}`, target));
        extraBaselines.push(
          await startProcess(
            `baseline-${index}`,
            ['--import', 'tsx', 'bench/baseline.ts', fixturesFile, '$PORT'],
            {},
          ),
        );
      }
    }
    const measuredServices = [service, ...extraServices];
    const measuredBaselines = [baseline, ...extraBaselines];
    const pinned =
      wants('throughput') &&
      args.pin === true &&
      cpus >= 2 &&
      pinProcess(process.pid, cpus > 2 ? `0-${cpus - 2}` : '0') &&
      [...measuredServices, ...measuredBaselines].every((measured) =>
        pinProcess(measured.child.pid!, serverCpu),
      );
    if (wants('throughput')) {
      results.placement = pinned
        ? `service and baseline pinned to CPU ${serverCpu}, the load generator to the other${cpus > 2 ? 's' : ''} (taskset)`
        : 'left to the scheduler';
    }
    if (wants('throughput') && throughputWarmUp > 0) {
      // A replica serves for hours; in their first minutes the same processes spent more per read
      // than later, and the first scenarios measured paid for it (docs/PERFORMANCE.md, tenth pass).
      log(`throughput: ${throughputWarmUp} s of warm-up on every scenario, both sides`);
      const each = Math.max(1, Math.round(throughputWarmUp / throughputScenarios.length / 2));
      for (const scenario of throughputScenarios) {
        for (const measured of [...measuredBaselines, ...measuredServices]) {
          await load(measured.base, { ...scenario, connections, duration: each, warmup: false });
        }
      }
    }
    for (const scenario of wants('throughput') ? throughputScenarios : []) {
      log(`throughput: ${scenario.scenario}`);
      // Alternate baseline and service runs and keep the median of each: the machine's other load
      // moves between runs, and alternating spreads it evenly over both sides.
      // Runs by process, both sides in the same order: baseline i, then service i.
      const baselineRuns: Run[][] = measuredBaselines.map(() => []);
      const serviceRuns: Run[][] = measuredServices.map(() => []);
      for (let round = 0; round < rounds; round++) {
        for (let index = 0; index < measuredServices.length; index++) {
          const [baselineProcess, serviceProcess] = [measuredBaselines[index]!, measuredServices[index]!];
          baselineRuns[index]!.push(
            await load(baselineProcess.base, { ...scenario, connections, pid: baselineProcess.child.pid }),
          );
          serviceRuns[index]!.push(
            await load(serviceProcess.base, { ...scenario, connections, pid: serviceProcess.child.pid }),
          );
        }
      }
      for (const run of baselineRuns.flat())
        expectStatus(`baseline ${scenario.scenario}`, run, scenario.status);
      for (const run of serviceRuns.flat())
        expectStatus(`service ${scenario.scenario}`, run, scenario.status);
      const baselineRun = sideOf(baselineRuns.flat());
      const serviceRun = sideOf(serviceRuns.flat());
      const perProcess = (runs: Run[][]) =>
        runs.map((processRuns) => sideOf(processRuns).cpuMicros ?? Number.NaN);
      results.throughput.push({
        scenario: scenario.scenario,
        service: serviceRun,
        baseline: baselineRun,
        ratio: serviceRun.rps / baselineRun.rps,
        serviceProcesses: perProcess(serviceRuns),
        baselineProcesses: perProcess(baselineRuns),
      });
    }
    await stop(baseline);
    baseline = undefined;
    for (const extra of [...extraServices, ...extraBaselines]) await stop(extra);
    extraServices = [];
    extraBaselines = [];
    if (args.pin === true && cpus >= 2) {
      // The later parts measure the service as it runs in production: on every CPU (also undoes a
      // pinning that stopped halfway).
      pinProcess(process.pid, allCpus);
      pinProcess(service.child.pid!, allCpus);
    }

    // --- latency with the cache (the polling case: the same query again and again)
    const latencyScenarios = (cache: 'on' | 'off') => [
      {
        scenario: 'catalogue page (limit=100)',
        path: urls.catalogue,
        next:
          cache === 'off'
            ? () => `/skills?limit=100&cursor=${cursorAfter(syntheticSkill(randomInt(skillCount)).name)}`
            : undefined,
      },
      {
        scenario: 'search, a task-style request (q, limit=10)',
        path: `/skills?limit=10&q=${encodeURIComponent(TASK_REQUESTS[0]!)}`,
        next: cache === 'off' ? () => `/skills?limit=10&q=${encodeURIComponent(taskRequest())}` : undefined,
      },
      {
        scenario: '/prompt?budget=4000',
        path: '/prompt?budget=4000',
        next: cache === 'off' ? () => `/prompt?budget=${3_000 + randomInt(2_000)}` : undefined,
      },
    ];
    for (const scenario of wants('latency') ? latencyScenarios('on') : []) {
      log(`latency (cache on): ${scenario.scenario}`);
      const run = await load(base, { ...scenario, connections: latencyConnections });
      expectStatus(scenario.scenario, run, '200');
      results.latency.push({ scenario: scenario.scenario, cache: 'on', run });
    }

    // --- memory: after warm-up, then a soak of mixed reads
    results.memory.afterWarmupMiB = rssMiB(service);
    log(`soak: ${soakSeconds} s of mixed reads`);
    const mix = (): string => {
      const r = Math.random();
      const name = syntheticSkill(randomInt(skillCount)).name;
      if (r < 0.4) return `/skills/${name}/content`;
      if (r < 0.55) return `/skills/${name}/files/SKILL.md?version=1.0.0`;
      if (r < 0.7) return `/skills?limit=100&cursor=${cursorAfter(name)}`;
      if (r < 0.85) return `/skills?limit=50&q=${encodeURIComponent(searchTerm())}`;
      if (r < 0.95) return `/skills/${name}`;
      return '/prompt?budget=4000';
    };
    const samples: number[] = [rssMiB(service)];
    const soak = await load(base, {
      path: '/skills',
      connections: latencyConnections,
      duration: wants('soak') ? soakSeconds : 1,
      // Without the soak part, one plain catalogue page (no prompt render left running for what follows).
      next: wants('soak') ? mix : () => '/skills?limit=1',
      warmup: false,
      onTick: () => samples.push(rssMiB(service!)),
    });
    samples.push(rssMiB(service));
    results.memory.peakMiB = rssMiB(service, 'VmHWM');
    results.memory.samples = samples.map((value) => Math.round(value));
    results.memory.soakStartMiB = samples[0]!;
    results.memory.soakMaxMiB = Math.max(...samples);
    results.memory.soakEndMiB = samples.at(-1)!;
    const half = Math.floor(samples.length / 2);
    const medianOf = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    results.memory.firstHalfMedianMiB = medianOf(samples.slice(0, half));
    results.memory.secondHalfMedianMiB = medianOf(samples.slice(half));
    results.memory.soakRps = soak.rps;
    log(`  soak: ${Math.round(soak.rps)} req/s, statuses ${JSON.stringify(soak.statuses)}`);

    // --- ingest: 8 concurrent publishers of typical 5 KB skills, over HTTP
    if (ingestCount > 0 && wants('ingest')) {
      log(`ingest: ${ingestCount} skills, 8 publishers`);
      const runId = Date.now().toString(36);
      // A few publishes first, one at a time and not counted: the first ones compile the publish
      // path and load the tokenizer's vocabulary, which the rate is not about.
      for (let i = 0; i < INGEST_WARM_UP; i++) {
        await publishOne(base, await typicalBundle(`ingest-${runId}-warm-${i}`));
      }
      const bodies = await Promise.all(
        Array.from({ length: ingestCount }, (_, i) => typicalBundle(`ingest-${runId}-${i}`)),
      );
      let next = 0;
      let failures = 0;
      const times: number[] = [];
      const servicePid = service.child.pid!;
      const serviceCpuBefore = cpuTicks(servicePid);
      const databaseCpuBefore = backend === 'pg' ? postgresCpuTicks() : undefined;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < bodies.length) {
            const i = next++;
            const t = performance.now();
            const status = await publishOne(base, bodies[i]!);
            times.push(performance.now() - t);
            if (status !== 201) failures += 1;
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const perPublish = (ticks: number) => (ticks * TICK_MICROS) / 1000 / ingestCount;
      times.sort((a, b) => a - b);
      results.ingest = {
        skills: ingestCount,
        seconds,
        perSecond: ingestCount / seconds,
        p50: percentile(times, 50),
        p95: percentile(times, 95),
        failures,
        serviceCpuMs: perPublish(cpuTicks(servicePid) - serviceCpuBefore),
        ...(databaseCpuBefore === undefined
          ? {}
          : { databaseCpuMs: perPublish(postgresCpuTicks() - databaseCpuBefore) }),
        promptAfterPublish: await promptsAfterPublishes(base, runId),
      };
    }

    // --- two replicas on one PostgreSQL
    if (backend === 'pg' && wants('replicas')) {
      log('replicas: starting a second service on the same database');
      replica = await startService('replica', target);
      results.replicas = await replicaDelays(base, replica.base);
      await stop(replica);
      replica = undefined;
    }

    // --- latency without the cache: every request goes to the database and renders
    if (wants('uncached')) {
      await stop(service);
      service = undefined;
      log('latency (cache off): restarting the service with SKILLREG_CACHE_MB=0');
      service = await startService('service-uncached', target, { SKILLREG_CACHE_MB: '0' });
      results.readySeconds.uncached = service.readySeconds;
    }
    for (const scenario of wants('uncached') ? latencyScenarios('off') : []) {
      log(`latency (cache off): ${scenario.scenario}`);
      // The budgeted prompt too, as many requests as the others: its answer no longer grows with the
      // catalogue (it names what it left out by count), so its p95 is measured, not one of ten.
      const run = await load(service.base, { ...scenario, connections: latencyConnections });
      expectStatus(scenario.scenario, run, '200');
      results.latency.push({ scenario: scenario.scenario, cache: 'off', run });
    }
  } finally {
    await stop(baseline);
    for (const extra of [...extraServices, ...extraBaselines]) await stop(extra);
    await stop(replica);
    await stop(service);
    await rm(scratch, { recursive: true, force: true });
    if (!args.keep && !args.reuse)
      await target.drop().catch((error) => log(`could not drop the database: ${error}`));
  }
  results.machine.loadAverageAtEnd = os.loadavg()[0]!.toFixed(2);
  process.stdout.write(report(results));
  if (args.out) await writeFile(args.out, `${JSON.stringify(results, null, 2)}\n`);
}

/**
 * Publish, publish again, move a tag and yank on A; poll B as fast as it answers until it serves the
 * change. Reports how long B took after A answered, whether B's very first request was already fresh,
 * and checks that B never goes back to the old answer once it has served the new one.
 */
/**
 * Seconds until the database has run no statement of another session for QUIET_MS (polled), counted
 * from now less the quiet time itself; at most two minutes.
 */
async function quietDatabaseAfter(url: string): Promise<number> {
  const QUIET_MS = 2_000;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = performance.now();
    let quietSince = started;
    while (performance.now() - started < 120_000) {
      const { rows } = await client.query<{ busy: number }>(
        `select count(*)::int as busy from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state = 'active'
            and backend_type = 'client backend'`,
      );
      if (rows[0]!.busy > 0) quietSince = performance.now();
      else if (performance.now() - quietSince >= QUIET_MS) break;
      await sleep(100);
    }
    return (quietSince - started) / 1000;
  } finally {
    await client.end();
  }
}

/** Milliseconds until `path` answered 200 in full. */
async function timedGet(base: string, path: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return performance.now() - started;
}

/** See Results.ingest.promptAfterPublish. */
async function promptsAfterPublishes(
  base: string,
  runId: string,
): Promise<NonNullable<Results['ingest']>['promptAfterPublish']> {
  const rounds = 10;
  const first: number[] = [];
  const again: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if ((await publishOne(base, await typicalBundle(`ingest-${runId}-prompt-${round}`))) !== 201)
      throw new Error('publish before a prompt');
    first.push(await timedGet(base, `/prompt?budget=${4_000 + round}`));
    again.push(await timedGet(base, `/prompt?budget=${4_500 + round}`));
  }
  return { rounds, first: first.sort((a, b) => a - b), again: again.sort((a, b) => a - b) };
}

async function replicaDelays(a: string, b: string): Promise<NonNullable<Results['replicas']>> {
  const trials = 20;
  const kinds = ['publish (new skill)', 'publish (new version)', 'tag move', 'yank'] as const;
  const delays: Record<(typeof kinds)[number], number[]> = {
    'publish (new skill)': [],
    'publish (new version)': [],
    'tag move': [],
    yank: [],
  };
  const firstFresh: Record<string, number> = {};
  let staleAfterFresh = 0;
  const versionOf = async (url: string) => {
    const res = await fetch(`${b}${url}`);
    await res.arrayBuffer();
    return res.status === 200 ? res.headers.get('x-skill-version') : null;
  };
  const observe = async (
    kind: (typeof kinds)[number],
    url: string,
    expected: string,
    write: () => Promise<void>,
  ) => {
    await versionOf(url); // B has the old answer cached
    await write();
    const start = performance.now();
    let first = true;
    for (;;) {
      const version = await versionOf(url);
      if (version === expected) break;
      first = false;
      if (performance.now() - start > 5_000) throw new Error(`replica never served ${kind} (${url})`);
    }
    delays[kind].push(performance.now() - start);
    if (first) firstFresh[kind] = (firstFresh[kind] ?? 0) + 1;
    for (let i = 0; i < 10; i++) if ((await versionOf(url)) !== expected) staleAfterFresh += 1;
  };
  const runId = Date.now().toString(36);
  for (let trial = 0; trial < trials; trial++) {
    const name = `replica-${runId}-${trial}`;
    const content = `/skills/${name}/content`;
    await observe('publish (new skill)', content, '1.0.0', async () => {
      if ((await publishOne(a, await typicalBundle(name, '1.0.0'))) !== 201) throw new Error('publish');
    });
    await observe('publish (new version)', content, '1.0.1', async () => {
      if ((await publishOne(a, await typicalBundle(name, '1.0.1'))) !== 201) throw new Error('publish');
    });
    await observe('tag move', `${content}?tag=stable`, '1.0.0', async () => {
      const res = await fetch(`${a}/skills/${name}/tags/stable`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ version: '1.0.0' }),
      });
      if (res.status !== 200) throw new Error(`tag move ${res.status}`);
    });
    await observe('yank', content, '1.0.0', async () => {
      const res = await fetch(`${a}/skills/${name}/versions/1.0.1`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      if (res.status !== 200) throw new Error(`yank ${res.status}`);
    });
  }
  return kinds.map((kind) => {
    const sorted = [...delays[kind]].sort((x, y) => x - y);
    return {
      change: kind,
      trials,
      firstRequestFresh: firstFresh[kind] ?? 0,
      median: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      max: sorted.at(-1)!,
      staleAfterFresh,
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// Report

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

function report(results: Results): string {
  const lines: string[] = [];
  const m = results.machine;
  lines.push(
    `## ${results.backend === 'pg' ? 'PostgreSQL' : 'PGlite'}, ${results.skills.toLocaleString('en-US')} skills`,
    '',
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; database: ${m.database}.`,
    `Service: ${m.runtime}. Load average (1 min) at start ${m.loadAverageAtStart}, at end ${m.loadAverageAtEnd}. Seeded in ${f1(results.seedSeconds)} s. Start to ready (GET /readyz 200): ${f1(results.readySeconds.cached ?? Number.NaN)} s${results.readySeconds.uncached === undefined ? '' : `, ${f1(results.readySeconds.uncached)} s without the cache`}.${results.startupChecksSeconds === undefined ? '' : ` PostgreSQL busy with the start-up checks for ${f1(results.startupChecksSeconds)} s after ready (waited for before measuring).`}`,
    `autocannon in the bench process, service and baseline as child processes; ${results.settings.duration} s per run after 1 s of warm-up; throughput is the median of ${results.settings.rounds} alternating rounds over ${results.settings.processes ?? 1} process${(results.settings.processes ?? 1) === 1 ? '' : 'es'} a side (CPU per request: the median of all those runs), ${results.settings.connections} connections, after ${results.settings.throughputWarmUp ?? 0} s of warm-up over all scenarios; latency runs use ${results.settings.latencyConnections}.`,
    '',
    '### Throughput against a bare Fastify serving the same bytes from memory (target: CPU ratio >= 0.85x)',
    '',
    `CPU ratio: the baseline's CPU per request over the service's (above 1, the service spends less). Processes: ${results.placement ?? 'left to the scheduler'}.`,
    '',
    '| scenario | service req/s | baseline req/s | ratio | service p95 ms | baseline p95 ms | service CPU µs/req | baseline CPU µs/req | CPU ratio | by process, service; baseline (µs) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  for (const row of results.throughput) {
    const cpuRatio = (row.baseline.cpuMicros ?? Number.NaN) / (row.service.cpuMicros ?? Number.NaN);
    const byProcess = `${(row.serviceProcesses ?? []).map(f1).join(' / ')}; ${(row.baselineProcesses ?? []).map(f1).join(' / ')}`;
    lines.push(
      `| ${row.scenario} | ${f0(row.service.rps)} | ${f0(row.baseline.rps)} | ${f2(row.ratio)}x | ${f1(row.service.p95)} | ${f1(row.baseline.p95)} | ${f1(row.service.cpuMicros ?? Number.NaN)} | ${f1(row.baseline.cpuMicros ?? Number.NaN)} | ${f2(cpuRatio)}x | ${byProcess} |`,
    );
  }
  lines.push(
    '',
    '### Latency (target p95 < 20 ms at 10,000 skills, < 50 ms at 100,000)',
    '',
    'Cache on: the same request repeated (what polling agents do). Cache off: `SKILLREG_CACHE_MB=0` and a different page, search or budget on every request, so each one queries the database and renders.',
    '',
    '| request | cache | req/s | p50 ms | p95 ms | p99 ms |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  );
  for (const row of results.latency) {
    lines.push(
      `| ${row.scenario} | ${row.cache} | ${f0(row.run.rps)} | ${f1(row.run.p50)} | ${f1(row.run.p95)} | ${f1(row.run.p99)} |`,
    );
  }
  if (results.ingest) {
    const i = results.ingest;
    lines.push(
      '',
      '### Ingest (target >= 100 skills/s from 8 concurrent publishers of ~5 KB skills)',
      '',
      `${i.skills} skills in ${f1(i.seconds)} s: **${f0(i.perSecond)} skills/s**; publish p50 ${f1(i.p50)} ms, p95 ${f1(i.p95)} ms; ${i.failures} failures. CPU per publish: service ${f1(i.serviceCpuMs)} ms${i.databaseCpuMs === undefined ? '' : `, PostgreSQL ${f1(i.databaseCpuMs)} ms (every PostgreSQL process of the machine)`}; after ${INGEST_WARM_UP} publishes not counted.`,
      '',
      `Then ${i.promptAfterPublish.rounds} publishes one at a time, each followed by \`/prompt?budget=N\` (the first prompt of the new snapshot) and another budget: first p50 ${f1(percentile(i.promptAfterPublish.first, 50))} ms, max ${f1(i.promptAfterPublish.first.at(-1)!)} ms; another budget p50 ${f1(percentile(i.promptAfterPublish.again, 50))} ms, max ${f1(i.promptAfterPublish.again.at(-1)!)} ms.`,
    );
  }
  lines.push('', '### Two replicas on one database (target: served by the other within 100 ms)', '');
  if (results.replicas) {
    lines.push(
      "Write on A, then poll B until it serves the change; delay measured from A's answer.",
      '',
      '| change | trials | B fresh on its first request | median ms | p95 ms | max ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const row of results.replicas) {
      lines.push(
        `| ${row.change} | ${row.trials} | ${row.firstRequestFresh}/${row.trials} | ${f1(row.median)} | ${f1(row.p95)} | ${f1(row.max)} |`,
      );
    }
    lines.push(
      '',
      `Stale answers from B after it had served the change: ${results.replicas[0]?.staleAfterFresh ?? 0}.`,
    );
  } else {
    lines.push('n/a: PGlite is embedded in one process.');
  }
  const mem = results.memory;
  lines.push(
    '',
    '### Memory (target: RSS < 300 MB at 100,000 skills, no growth under a read soak)',
    '',
    `RSS after seeding and warm-up: ${f0(mem.afterWarmupMiB)} MiB. Soak of ${mem.soakSeconds} s of mixed reads of random skills (content, files, pages, searches, metadata, prompt; ${f0(mem.soakRps)} req/s), RSS sampled every second: start ${f0(mem.soakStartMiB)} MiB, median of the first half ${f0(mem.firstHalfMedianMiB)} MiB, median of the second half ${f0(mem.secondHalfMedianMiB)} MiB, max ${f0(mem.soakMaxMiB)} MiB, end ${f0(mem.soakEndMiB)} MiB. Peak RSS since the start (VmHWM, the start-up reads included): ${f0(mem.peakMiB)} MiB.`,
    '',
  );
  return `${lines.join('\n')}\n`;
}

main().catch((error) => {
  process.stderr.write(
    `[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
