import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** initdb refuses root: as root, the tools run as the `postgres` user. */
const asRoot = userInfo().uid === 0;

function hasPostgresUser(): boolean {
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A PostgreSQL primary and its streaming standby of the test's own, made with PostgreSQL's own tools
 * (initdb, pg_basebackup -R) in a temporary folder, on free ports: never the machine's cluster.
 */
export interface StandbyPair {
  /** postgres:// URL of `database` on the primary, and on the standby. */
  primaryUrl(database?: string): string;
  standbyUrl(database?: string): string;
  /** Runs `text` on the primary's or the standby's `database`, on a connection of its own. */
  onPrimary<Row>(text: string, database?: string): Promise<Row[]>;
  onStandby<Row>(text: string, database?: string): Promise<Row[]>;
  /** Stops the standby at once (`pg_ctl stop -m immediate`), and starts it again. */
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  /** The standby's server log. */
  standbyLog(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The bin folder of the newest PostgreSQL on the machine with initdb, or undefined (also as root
 * without a `postgres` user to run it as).
 */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  if (asRoot && !hasPostgresUser()) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(path.join(root, version, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

async function tool(bin: string, name: string, args: string[]): Promise<string> {
  const command = path.join(bin, name);
  const { stdout } = await (asRoot
    ? run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 })
    : run(command, args, { timeout: 60_000 }));
  return stdout;
}

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function query<Row>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

export async function startStandbyPair(bin: string): Promise<StandbyPair> {
  const base = await mkdtemp(path.join(tmpdir(), 'skillreg-standby-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(base, Number(stdout.trim()), Number(group.trim()));
  }
  const primaryDir = path.join(base, 'primary');
  const standbyDir = path.join(base, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  // Durability is not what is tested: fsync off makes the clusters quick to make and start.
  const options = (port: number) => `-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = (dir: string, port: number, log: string) =>
    tool(bin, 'pg_ctl', ['-D', dir, '-o', options(port), '-l', path.join(base, log), '-w', 'start']);
  const stop = (dir: string) => tool(bin, 'pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']);
  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let primaryRunning = false;
  let standbyRunning = false;
  const close = async () => {
    if (standbyRunning) await stop(standbyDir).catch(() => {});
    if (primaryRunning) await stop(primaryDir).catch(() => {});
    await rm(base, { recursive: true, force: true });
  };
  try {
    await tool(bin, 'initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '-N']);
    await start(primaryDir, primaryPort, 'primary.log');
    primaryRunning = true;
    const source = ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres'];
    await tool(bin, 'pg_basebackup', [...source, '-D', standbyDir, '-R', '-X', 'stream']);
    await start(standbyDir, standbyPort, 'standby.log');
    standbyRunning = true;
  } catch (error) {
    await close();
    throw error;
  }
  return {
    primaryUrl: (database = 'postgres') => url(primaryPort, database),
    standbyUrl: (database = 'postgres') => url(standbyPort, database),
    onPrimary: (text, database = 'postgres') => query(url(primaryPort, database), text),
    onStandby: (text, database = 'postgres') => query(url(standbyPort, database), text),
    async stopStandby() {
      await stop(standbyDir);
      standbyRunning = false;
    },
    async startStandby() {
      await start(standbyDir, standbyPort, 'standby.log');
      standbyRunning = true;
    },
    standbyLog: () => readFile(path.join(base, 'standby.log'), 'utf8'),
    close,
  };
}
