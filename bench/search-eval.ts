/**
 * Search quality and speed, measured as ../shared/search-eval/README.md describes:
 * `npm run bench:search -- [options]`.
 *
 *   --distractors N        synthetic distractor skills published around the corpus (default 10000)
 *   --recombined F         share of distractors stitched from real skills' sentences (default 0.3)
 *   --backend pg|pglite    database (default pg: a dedicated database, dropped after)
 *   --database-url URL     PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME   (pg) the database created and dropped there (default skillreg_search_eval)
 *   --queries FILE         queries (default ../shared/search-eval/queries.json)
 *   --verbose              print every query whose relevant skill is not in the first five
 *   --out FILE             also write the results as JSON
 *   --offline              the ranker alone, in this process, no server (quick iteration)
 *
 * Faces: GET /skills?q= and the search_skills tool over MCP (POST /mcp), each query's first answer
 * timed by this client. The service runs in this process (buildApp, listening on a loopback port).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { DEFAULT_SCOPE } from '../src/domain/scope.js';
import { BENCH_DATABASE_URL } from './processes.js';
import { corpusFolders, corpusSkills, evalQueries, QUERIES_FILE } from './search-eval/corpus.js';
import { distractors } from './search-eval/distractors.js';
import {
  catalogueFace,
  type Face,
  type FaceResult,
  measureFace,
  publishAll,
  type Send,
} from './search-eval/measure.js';

const { values } = parseArgs({
  options: {
    distractors: { type: 'string', default: '10000' },
    recombined: { type: 'string', default: '0.3' },
    backend: { type: 'string', default: 'pg' },
    'database-url': {
      type: 'string',
      default: BENCH_DATABASE_URL,
    },
    'database-name': { type: 'string', default: 'skillreg_search_eval' },
    queries: { type: 'string', default: QUERIES_FILE },
    verbose: { type: 'boolean', default: false },
    out: { type: 'string' },
    offline: { type: 'boolean', default: false },
  },
});

if (values.offline) {
  process.argv = [
    process.argv[0]!,
    process.argv[1]!,
    '--distractors',
    values.distractors!,
    '--recombined',
    values.recombined!,
    '--queries',
    values.queries!,
    ...(values.verbose ? ['--verbose'] : []),
  ];
  await import('./search-eval/offline.js');
  process.exit(0);
}

const TOKEN = 'search-eval-admin-token-0123456789';
const count = Number(values.distractors);
const real = corpusSkills();
const extra = distractors(count, real, { recombinedShare: Number(values.recombined) });
const queries = evalQueries(values.queries);

let databaseUrl: string | undefined;
let dataDir: string | undefined;
const admin = new pg.Client({ connectionString: values['database-url'] });
if (values.backend === 'pg') {
  await admin.connect();
  await admin.query(`drop database if exists ${values['database-name']}`);
  await admin.query(`create database ${values['database-name']}`);
  const url = new URL(values['database-url']!);
  url.pathname = `/${values['database-name']}`;
  databaseUrl = url.toString();
} else {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'skillreg-search-eval-'));
}

const config = loadConfig({
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { SKILLREG_DATA_DIR: dataDir }),
  SKILLREG_ADMIN_TOKEN: TOKEN,
  SKILLREG_SEED_DIR: '',
  SKILLREG_RATE_LIMIT_WRITES: '0',
  LOG_LEVEL: 'warn',
});
const app = await buildApp({ config, logger: false });
const base = await app.listen({ host: '127.0.0.1', port: 0 });

const send: Send = async ({ method, url, headers, body }) => {
  const payload = typeof body === 'string' || body === undefined ? body : new Uint8Array(body);
  const response = await fetch(new URL(url, base), { method, headers, body: payload });
  const text = await response.text();
  return { status: response.status, json: () => JSON.parse(text) };
};

try {
  const started = performance.now();
  const { refused } = await publishAll(send, TOKEN, corpusFolders(), extra);
  const publishSeconds = (performance.now() - started) / 1000;
  const total = (await send({ method: 'GET', url: '/skills?limit=1' })).status;
  console.log(
    `published ${real.length} corpus skills (${refused.length} folders refused) and ${extra.length} distractors in ${publishSeconds.toFixed(0)} s (${total})`,
  );

  const mcp = new Client({ name: 'search-eval', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', base)));
  const tools = await mcp.listTools();
  const faces: [string, Face][] = [['GET /skills?q=', catalogueFace(send)]];
  if (tools.tools.some((tool) => tool.name === 'search_skills')) {
    faces.push([
      'MCP search_skills',
      async (query, limit) => {
        const result = await mcp.callTool({ name: 'search_skills', arguments: { query, limit } });
        if (result.isError) throw new Error('tool error');
        const content = result.structuredContent as { results: { name: string }[] };
        return content.results.map((item) => item.name);
      },
    ]);
  }
  if (process.env.SEARCH_EVAL_PROFILE) {
    const registry = app.registry;
    const times: number[] = [];
    const itemTimes: number[] = [];
    for (const { q } of queries) {
      const t0 = performance.now();
      const { hits } = await registry.search.search(DEFAULT_SCOPE, { query: q, limit: 10 });
      const t1 = performance.now();
      await registry.repositories.catalogue.itemsOf(
        'latest',
        hits.map((hit) => hit.name),
      );
      times.push(t1 - t0);
      itemTimes.push(performance.now() - t1);
    }
    const p = (xs: number[], f: number) => xs.sort((a, b) => a - b)[Math.floor(xs.length * f)]!.toFixed(2);
    console.log(
      `in process: search p50 ${p(times, 0.5)} p95 ${p(times, 0.95)} ms; items p50 ${p(itemTimes, 0.5)} p95 ${p(itemTimes, 0.95)} ms`,
    );
  }
  const results: FaceResult[] = [];
  for (const [name, face] of faces) {
    const result = await measureFace(name, face, queries);
    results.push(result);
    console.log(
      `${name.padEnd(20)} recall@5 ${result.recall5.toFixed(3)}  MRR@10 ${result.mrr10.toFixed(3)}  ` +
        `p50 ${result.p50Ms.toFixed(1)} ms  p95 ${result.p95Ms.toFixed(1)} ms  errors ${result.errors}`,
    );
    if (values.verbose) {
      for (const miss of result.misses)
        console.log(
          `  MISS ${miss.q.slice(0, 100)}\n    want ${miss.relevant.join(', ')}\n    got  ${miss.got.join(', ')}`,
        );
    }
  }
  await mcp.close();
  if (values.out) {
    await writeFile(
      values.out,
      JSON.stringify(
        {
          distractors: extra.length,
          recombined: Number(values.recombined),
          corpus: real.length,
          queries: queries.length,
          results,
        },
        null,
        2,
      ),
    );
  }
} finally {
  await app.close();
  if (values.backend === 'pg') {
    await admin.query(`drop database if exists ${values['database-name']}`);
    await admin.end();
  } else if (dataDir) {
    await rm(dataDir, { recursive: true, force: true });
  }
}
