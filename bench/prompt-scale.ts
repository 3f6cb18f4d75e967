/**
 * What GET /prompt and GET /tools cost at catalogue scale: `node --import tsx bench/prompt-scale.ts`.
 *
 *   --sizes N,N,...         catalogue sizes, seeded one after the other into one database (default 10000,100000)
 *   --database-url URL      PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database NAME         the database created on it (default skillreg_prompt_bench)
 *   --keep                  keep the database afterwards
 *   --reuse                 use the database as it is (kept by an earlier run), seeding only what is missing
 *
 * For each size: a fresh app (in this process, over HTTP on a loopback port) and an empty token memo, then
 * every rendering once ("cold": the first request after start renders and counts everything), then one
 * publish (a new version of one skill: the catalogue revision moves, every rendering is stale) and every
 * rendering again ("after one publish"). Each line gives the wall time of the request, the longest the
 * event loop was blocked meanwhile, the answer's size and what it selected. Heap
 * figures are after a forced GC when node runs with --expose-gc (`node --expose-gc --import tsx ...`).
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';
import * as promptModule from '../src/render/prompt.js';
import { BENCH_DATABASE_URL } from './processes.js';
import { seedSkills, syntheticSkill } from './seed.js';

const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    'database-url': {
      type: 'string',
      default: BENCH_DATABASE_URL,
    },
    database: { type: 'string', default: 'skillreg_prompt_bench' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const DATABASE = args.database;
if (!/^[a-z_][a-z0-9_]*$/.test(DATABASE)) throw new Error(`--database ${DATABASE}: not a plain identifier`);

const SCENARIOS: { label: string; url: string }[] = [
  { label: 'prompt xml budget=4000', url: '/prompt?budget=4000' },
  { label: 'prompt markdown budget=4000', url: '/prompt?format=markdown&budget=4000' },
  { label: 'prompt json budget=4000', url: '/prompt?format=json&budget=4000' },
  { label: 'prompt xml, budget=0 (no limit)', url: '/prompt?budget=0' },
  { label: 'prompt json, budget=0 (no limit)', url: '/prompt?format=json&budget=0' },
  { label: 'tools anthropic', url: '/tools' },
];

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: args['database-url'] });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function heapMb(): string {
  (globalThis as { gc?: () => void }).gc?.();
  return `${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`;
}

/**
 * The longest the event loop went without running a 2 ms interval timer: how long the process could
 * not answer anything else. (perf_hooks' monitorEventLoopDelay does not see a single long block.)
 */
const probe = { last: performance.now(), maxGap: 0 };
const probeTimer = setInterval(() => {
  const now = performance.now();
  probe.maxGap = Math.max(probe.maxGap, now - probe.last);
  probe.last = now;
}, 2);
probeTimer.unref();

/** GET over real HTTP, keeping the chunks as they arrive (no copy of a 40 MB body while measuring). */
function get(
  base: string,
  path: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; chunks: Buffer[] }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function measure(base: string, url: string): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 10));
  probe.maxGap = 0;
  probe.last = performance.now();
  const started = performance.now();
  const res = await get(base, url);
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const blocked = probe.maxGap;
  const body = Buffer.concat(res.chunks);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.toString().slice(0, 300)}`);
  let what = '';
  if (url.includes('format=json')) {
    const json = JSON.parse(body.toString()) as { tokens: number; included: unknown[]; omittedCount: number };
    what = `${json.tokens} tokens, ${json.included.length} included, ${json.omittedCount} omitted`;
  } else if (url.startsWith('/prompt')) {
    what = `${res.headers['x-prompt-tokens']} tokens`;
  } else {
    const tools = JSON.parse(body.toString()) as {
      input_schema: { properties: { name: { enum?: unknown[] } } };
    }[];
    what = `enum of ${tools[0]?.input_schema.properties.name.enum?.length ?? 'none'}`;
  }
  return `${ms.toFixed(0).padStart(6)} ms  (event loop blocked up to ${blocked.toFixed(0).padStart(5)} ms)  ${(body.byteLength / 1024).toFixed(0).padStart(6)} KiB  ${what}`;
}

/** A new version of skill `index` (the server assigns the next patch). */
async function publishOne(app: FastifyInstance, index: number): Promise<void> {
  const { text } = syntheticSkill(index);
  const changed = text
    .replace(/description: "/, `description: "Changed for the benchmark at ${new Date().toISOString()}. `)
    .replace(/metadata:\n {2}version: "1\.0\.0"\n/, '');
  const res = await app.inject({
    method: 'POST',
    url: '/skills',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/markdown' },
    payload: changed,
  });
  if (res.statusCode !== 201) throw new Error(`publish: ${res.statusCode} ${res.body}`);
}

async function run(): Promise<void> {
  const sizes = args.sizes.split(',').map((value) => Number(value.trim()));
  if (!args.reuse) {
    await admin(`drop database if exists ${DATABASE} with (force)`);
    await admin(`create database ${DATABASE}`);
  }
  const url = withDatabase(args['database-url'], DATABASE);
  let database: Database | undefined = await openDatabase({ url });
  console.log(
    `node ${process.version}, PostgreSQL database ${DATABASE}; load average at start ${(
      await import('node:os')
    )
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  try {
    await database.migrate();
    const counted = await database.db.execute(sql`select count(*)::int as n from skills`);
    let seeded = (counted as unknown as { rows: { n: number }[] }).rows[0]!.n;
    for (const size of sizes) {
      const started = performance.now();
      if (size < seeded) throw new Error(`the database already holds ${seeded} skills, more than ${size}`);
      await seedSkills(database, { count: size - seeded, start: seeded });
      seeded = size;
      console.log(`\n## ${size} skills (seeded in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
      const clear = (promptModule as { clearEntryTokenMemo?: () => void }).clearEntryTokenMemo;
      clear?.();
      const app = await buildApp({
        config: loadConfig({
          DATABASE_URL: url,
          SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
          SKILLREG_SEED_DIR: '',
          LOG_LEVEL: 'silent',
        }),
        database,
        logger: false,
      });
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        console.log(`heap before: ${heapMb()}`);
        console.log('cold (fresh process state):');
        for (const scenario of SCENARIOS) {
          console.log(`  ${scenario.label.padEnd(30)} ${await measure(base, scenario.url)}`);
        }
        console.log(`heap after cold renders: ${heapMb()}`);
        await publishOne(app, 5 + sizes.indexOf(size));
        console.log('after one publish:');
        for (const scenario of SCENARIOS) {
          console.log(`  ${scenario.label.padEnd(30)} ${await measure(base, scenario.url)}`);
        }
        console.log(`heap after: ${heapMb()}`);
      } finally {
        await app.close();
      }
    }
  } finally {
    await database?.close();
    database = undefined;
    if (!args.keep) await admin(`drop database if exists ${DATABASE} with (force)`);
  }
}

await run();
