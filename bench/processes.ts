import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** What the benchmarks share about the processes they start and measure. */

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** CPU time (user + system) a process has used so far, in USER_HZ ticks. */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Sets the CPUs every thread of process `pid` may run on (`taskset -a -p -c`, util-linux); false
 * when taskset is missing or refused.
 */
export function pinProcess(pid: number, cpus: string): boolean {
  const result = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  return result.status === 0;
}

/** CPU time used so far by every PostgreSQL server process of this machine, in USER_HZ ticks. */
export function postgresCpuTicks(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.slice(stat.indexOf('(') + 1, stat.indexOf(')')).startsWith('postgres')) continue;
      total += cpuTicks(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Linux reports process times in USER_HZ ticks, 100 a second. */
export const TICK_MICROS = 10_000;

/** Compiles src/ into dist/ as `npm start` does first (its prestart), so the start script can run. */
export function buildForStart(root: string): void {
  const result = spawnSync('npm', ['run', 'prestart', '--silent'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm run prestart failed (exit ${result.status})`);
}

/**
 * The node arguments `npm start` runs the service with (package.json's start script without its `exec
 * node`), so the benches start it the same way.
 */
export function startArguments(root: string): string[] {
  const words = (
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start
    .split(/\s+/)
    .filter(Boolean);
  const node = words.indexOf('node');
  if (node < 0) throw new Error(`package.json's start script does not run node: ${words.join(' ')}`);
  return words.slice(node + 1);
}

/** The PostgreSQL server the benches use unless told another (`--database-url`). */
export const BENCH_DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
