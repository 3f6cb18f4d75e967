/**
 * Where a replica's memory goes (issue 32): `npx tsx bench/memory.ts -- --database-name NAME`.
 *
 *   --database-url URL   PostgreSQL server (default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
 *   --database-name NAME a database already seeded by `npm run bench -- --keep` (default skillreg_bench)
 *
 * In one process, on the registry's own services (openRegistry) over an already seeded database: the
 * heap and the memory outside it (typed arrays, buffers) after a full collection, before and after each
 * structure a replica keeps for the life of the process is built (the `latest` search index, then the
 * agent catalogue copy, as src/server.ts builds them at start), and the process's RSS.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { DEFAULT_NAMESPACE } from '../src/domain/scope.js';
import { openRegistry } from '../src/services/registry.js';
import { BENCH_DATABASE_URL } from './processes.js';

const { values: args } = parseArgs({
  options: {
    'database-url': { type: 'string', default: BENCH_DATABASE_URL },
    'database-name': { type: 'string', default: 'skillreg_bench' },
  },
});
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const url = new URL(args['database-url']!);
url.pathname = `/${args['database-name']}`;

interface Reading {
  heapMiB: number;
  externalMiB: number;
  rssMiB: number;
}

function read(): Reading {
  gc();
  gc();
  const usage = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return {
    heapMiB: usage.heapUsed / 2 ** 20,
    externalMiB: usage.external / 2 ** 20,
    rssMiB: rssKiB / 1024,
  };
}

const f1 = (value: number) => value.toFixed(1);
function line(label: string, before: Reading, after: Reading, seconds: number): string {
  return `| ${label} | ${f1(after.heapMiB - before.heapMiB)} | ${f1(after.externalMiB - before.externalMiB)} | ${f1(after.rssMiB - before.rssMiB)} | ${seconds.toFixed(1)} |`;
}

const database = await openDatabase({ url: url.toString() });
const registry = await openRegistry({
  config: loadConfig({ SKILLREG_SEED_DIR: '', LOG_LEVEL: 'silent', DATABASE_URL: url.toString() }),
  database,
});
try {
  const rows: string[] = [];
  const start = read();
  let before = start;
  let clock = performance.now();
  await registry.search.warm();
  const afterSearch = read();
  const searchSeconds = (performance.now() - clock) / 1000;
  rows.push(line('search index of `latest`', before, afterSearch, searchSeconds));
  before = afterSearch;
  clock = performance.now();
  const snapshot = await registry.agents.catalogues.mirror(DEFAULT_NAMESPACE).snapshot();
  const afterCatalogue = read();
  rows.push(line('agent catalogue copy', before, afterCatalogue, (performance.now() - clock) / 1000));
  const stats = registry.search.indexStats(DEFAULT_NAMESPACE);
  process.stdout.write(
    [
      `${snapshot.entries.length} skills; search index: ${JSON.stringify(stats)}`,
      `after openRegistry: heap ${f1(start.heapMiB)} MiB, outside the heap ${f1(start.externalMiB)} MiB, RSS ${f1(start.rssMiB)} MiB`,
      '',
      '| structure | heap MiB | outside the heap MiB | RSS MiB | built in s |',
      '| --- | --- | --- | --- | --- |',
      ...rows,
      `| total | ${f1(afterCatalogue.heapMiB - start.heapMiB)} | ${f1(afterCatalogue.externalMiB - start.externalMiB)} | ${f1(afterCatalogue.rssMiB - start.rssMiB)} | |`,
      '',
      `RSS at the end: ${f1(afterCatalogue.rssMiB)} MiB (peak ${f1(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024)} MiB)`,
      '',
    ].join('\n'),
  );
} finally {
  await registry.close();
  await database.close();
}
