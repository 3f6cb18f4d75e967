/**
 * How long `skillreg sync` takes over a repository of unchanged skills (issue 14):
 * `npx tsx bench/sync-unchanged.ts [--skills N]`. Publishes N skill folders into a namespace once (writes
 * unlimited for the first pass), then syncs the same tree again with the default write limit, and
 * prints both durations and how many publish requests the second sync sent.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { runCli } from '../src/cli/main.js';
import type { Output } from '../src/cli/output.js';
import { loadConfig } from '../src/config.js';

const { values } = parseArgs({
  options: {
    skills: { type: 'string', default: '2000' },
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL },
  },
});
const count = Number(values.skills);
const TOKEN = 'sync-bench-admin-token-0123456789';
const work = await mkdtemp(path.join(os.tmpdir(), 'skillreg-sync-bench-'));

async function serve(writeLimit: string) {
  const config = loadConfig({
    ...(values['database-url']
      ? { DATABASE_URL: values['database-url'] }
      : { SKILLREG_DATA_DIR: path.join(work, 'data') }),
    SKILLREG_ADMIN_TOKEN: TOKEN,
    SKILLREG_SEED_DIR: '',
    SKILLREG_RATE_LIMIT_WRITES: writeLimit,
    LOG_LEVEL: 'warn',
  });
  const app = await buildApp({ config, logger: false });
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

const quiet: Output = {
  info: () => {},
  error: (line) => process.stderr.write(`${line}\n`),
  raw: () => {},
  rawError: () => {},
  interactive: false,
};
async function sync(url: string): Promise<number> {
  const started = performance.now();
  const code = await runCli(
    ['sync', `${work}/repo`, '--namespace', 'bench-sync', '--url', url, '--token', TOKEN],
    quiet,
  );
  if (code !== 0) throw new Error(`sync exited ${code}`);
  return (performance.now() - started) / 1000;
}

async function publishes(app: Awaited<ReturnType<typeof serve>>['app']): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  return [...text.matchAll(/^skillreg_publishes_total\{outcome="[^"]+"\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

try {
  for (let i = 0; i < count; i++) {
    const name = `sync-bench-${i}`;
    await mkdir(path.join(work, 'repo', 'skills', name), { recursive: true });
    await writeFile(
      path.join(work, 'repo', 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Skill ${i} of the sync benchmark, about task ${i % 97}.\n---\n# ${name}\n\n${'Do the thing carefully. '.repeat(40)}\n`,
    );
  }
  const first = await serve('0');
  const firstSeconds = await sync(first.url);
  await first.app.close();
  const second = await serve('600');
  const before = await publishes(second.app);
  const againSeconds = await sync(second.url);
  const sent = (await publishes(second.app)) - before;
  await second.app.close();
  console.log(
    `${count} skills: first sync (every skill published, writes unlimited) ${firstSeconds.toFixed(1)} s; unchanged re-sync at the default limit of 600 writes a minute ${againSeconds.toFixed(1)} s, ${sent} publish requests`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
