import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentHolder, LOCK_FILE, type LockHolder, lockDataDir } from '../../src/db/data-dir-lock.js';
import { skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN } from '../helpers/context.js';
import {
  baseEnv,
  connectionRefused,
  exitOf,
  freePort,
  REPO_ROOT,
  spawnCommand,
  tempDir,
  waitForLive,
  withMigratedCluster,
} from '../helpers/server-process.js';

// Real processes on the embedded database (the lock only exists there): the compiled server, as `npm
// start` and the image run it (test/helpers/global-setup.ts compiled it once for the run).
const SERVER = [process.execPath, path.join(REPO_ROOT, 'dist/server.js')];

let root: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  root = await tempDir('skillreg-lock-');
});
afterAll(async () => {
  await root?.remove();
});

function serverEnv(dataDir: string, port: number) {
  return baseEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    SKILLREG_DATA_DIR: dataDir,
    SKILLREG_SEED_DIR: '',
    SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
  });
}

async function publish(port: number, name: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/skills`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/markdown' },
    body: skillMd({ name, description: 'Acknowledged before the process was killed.' }),
  });
}

/** What a process printed, without the JSON log lines of a server that did start. */
function plainLines(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('{'));
}

describe('one process per embedded database', () => {
  it('a second process exits before it migrates or listens, naming the directory and the holder; a killed holder does not block the next start, and nothing acknowledged is lost', async () => {
    const dataDir = path.join(root.path, 'shared');
    // The holder opens a migrated cluster (this test is about the lock, not a first start).
    mkdirSync(dataDir);
    await withMigratedCluster(dataDir);
    const first = { port: await freePort() };
    const holder = spawnCommand(SERVER, serverEnv(dataDir, first.port));
    try {
      await waitForLive(`http://127.0.0.1:${first.port}`, holder);
      const name = uniqueName('kept');
      const published = await publish(first.port, name);
      expect(published.status, await published.clone().text()).toBe(201);

      const secondPort = await freePort();
      const second = spawnCommand(SERVER, serverEnv(dataDir, secondPort));
      const { code } = await exitOf(second);
      expect(code).not.toBe(0);
      const lines = plainLines(second.output());
      expect(lines, second.output()).toHaveLength(1);
      expect(lines[0]).toContain(realpathSync(dataDir));
      expect(lines[0]).toContain(`pid ${holder.pid}`);
      expect(lines[0]).not.toMatch(/\n\s+at /);
      expect(second.output()).not.toContain('"msg"'); // it never got as far as building the app
      expect(await connectionRefused(secondPort)).toBe(true);
      // The holder is untouched and still serves what it acknowledged.
      const lock = JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')) as LockHolder;
      expect(lock.pid).toBe(holder.pid);
      expect((await fetch(`http://127.0.0.1:${first.port}/skills/${name}/content`)).status).toBe(200);

      // Killed without a chance to clean up: the lock file stays behind, naming a dead process.
      holder.kill('SIGKILL');
      await exitOf(holder);
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(true);

      const thirdPort = await freePort();
      const third = spawnCommand(SERVER, serverEnv(dataDir, thirdPort));
      try {
        await waitForLive(`http://127.0.0.1:${thirdPort}`, third);
        expect(third.output()).not.toContain('waiting');
        const content = await fetch(`http://127.0.0.1:${thirdPort}/skills/${name}/content`);
        expect(content.status).toBe(200);
        expect(await content.text()).toContain('Do the thing');
        expect(JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(third.pid);
        // A clean stop gives the lock up.
        third.kill('SIGTERM');
        expect((await exitOf(third)).code, third.output()).toBe(0);
        expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
      } finally {
        if (third.exitCode === null) third.kill('SIGKILL');
      }
    } finally {
      if (holder.exitCode === null) holder.kill('SIGKILL');
    }
  }, 180_000);

  it('a port in use is found before anything is written, in one line', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = path.join(root.path, 'port-taken');
    try {
      const server = spawnCommand(SERVER, serverEnv(dataDir, port));
      const { code } = await exitOf(server);
      expect(code).not.toBe(0);
      const lines = plainLines(server.output());
      expect(lines, server.output()).toEqual([
        `skill-registry: port ${port} on 127.0.0.1 is already in use by another process; stop it, or set PORT to a free port`,
      ]);
      // The lock was given back and the database never opened: no PostgreSQL files, no lock.
      expect(existsSync(dataDir) ? readdirSync(dataDir) : []).toEqual([]);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('lockDataDir', () => {
  const foreign = (overrides: Partial<LockHolder> = {}): LockHolder => ({
    pid: 1,
    hostname: 'another-container',
    pidNamespace: 'pid:[1]',
    bootId: 'another-boot',
    startedAt: new Date().toISOString(),
    command: 'node dist/server.js',
    ...overrides,
  });

  it('refuses a lock another container keeps touching, after waiting to see it touched', async () => {
    const waits: number[] = [];
    // Another container's lock, touched by its heartbeat: PIDs mean nothing across namespaces.
    const planted = path.join(root.path, 'foreign-touched');
    const plantedLock = path.join(planted, LOCK_FILE);
    await lockDataDir(planted).then((lock) => lock.release());
    writeFileSync(plantedLock, JSON.stringify(foreign()));
    const toucher = setInterval(() => {
      const now = new Date();
      utimesSync(plantedLock, now, now);
    }, 100);
    try {
      await expect(
        lockDataDir(planted, { heartbeatMs: 100, staleAfterMs: 2_000, onWait: (_, ms) => waits.push(ms) }),
      ).rejects.toThrow(/in use by another skill-registry process \(pid 1 on host another-container/);
      expect(waits.length).toBeGreaterThan(0);
    } finally {
      clearInterval(toucher);
    }
  });

  it('takes over a lock another container stopped touching, and one whose PID was recycled', async () => {
    const stale = path.join(root.path, 'foreign-stale');
    await lockDataDir(stale).then((lock) => lock.release());
    writeFileSync(path.join(stale, LOCK_FILE), JSON.stringify(foreign()));
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(stale, LOCK_FILE), old, old);
    const taken = await lockDataDir(stale, { heartbeatMs: 100, staleAfterMs: 2_000 });
    expect(JSON.parse(readFileSync(path.join(stale, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await taken.release();

    // This machine, a live PID (our parent), but a start time that is not that process's.
    const recycled = path.join(root.path, 'recycled');
    await lockDataDir(recycled).then((lock) => lock.release());
    const self = currentHolder();
    writeFileSync(
      path.join(recycled, LOCK_FILE),
      JSON.stringify({ ...self, pid: process.ppid, startTicks: '1' }),
    );
    const again = await lockDataDir(recycled);
    await again.release();
  });

  it('of processes racing for one stale lock, exactly one gets it', async () => {
    const dir = path.join(root.path, 'race');
    await lockDataDir(dir).then((lock) => lock.release());
    // A lock naming a process that has exited.
    const gone = spawn('true');
    await exitOf(gone);
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ ...currentHolder(), pid: gone.pid }));
    // The compiled module (global-setup builds dist/ once per run): five racers need no TypeScript loader.
    const script = `import { lockDataDir } from ${JSON.stringify(path.join(REPO_ROOT, 'dist/db/data-dir-lock.js'))};
try { await lockDataDir(${JSON.stringify(dir)}); console.log('got'); await new Promise((r) => setTimeout(r, 3000)); }
catch (error) { console.log('refused', error.message); }`;
    const racers = Array.from({ length: 5 }, () =>
      spawnCommand([process.execPath, '--input-type=module', '-e', script], baseEnv({})),
    );
    await Promise.all(racers.map(exitOf));
    const outcomes = racers.map((racer) => racer.output().trim().split(' ')[0]);
    expect(
      outcomes.filter((outcome) => outcome === 'got'),
      racers.map((r) => r.output()).join('\n'),
    ).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'refused')).toHaveLength(4);
  }, 60_000);
});
