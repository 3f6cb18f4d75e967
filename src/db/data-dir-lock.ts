import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { link, mkdir, readFile, realpath, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * One process per embedded database. PGlite has no postmaster to refuse a second opener: two processes
 * on one data directory each keep their own copy of its pages, and what one of them acknowledges can
 * be gone after a restart. So the directory is locked before anything is migrated, seeded or served.
 *
 * The lock is a file naming its holder. On the same machine (the same PID namespace and boot) the
 * holder is alive exactly when its process is: a lock left by a killed process is taken over at once,
 * and a recycled PID is told apart by the process's start time. Across machines or containers sharing a
 * volume, PIDs mean nothing, so the holder touches the file every few seconds and a lock left untouched
 * for longer than STALE_AFTER_MS is taken over; a start finding a fresh one waits to see which it is.
 */

export const LOCK_FILE = 'skillreg.lock';
const HEARTBEAT_MS = 5_000;
const STALE_AFTER_MS = 20_000;

/** Who holds a lock, as written in the lock file. */
export interface LockHolder {
  pid: number;
  hostname: string;
  /** `pid:[inode]` of the holder's PID namespace (Linux); PIDs compare only within one. */
  pidNamespace?: string;
  /** The kernel's boot id (Linux): a PID from before a reboot names nobody. */
  bootId?: string;
  /** The process's start time in clock ticks since boot (Linux), to tell a recycled PID apart. */
  startTicks?: string;
  startedAt: string;
  command: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the data directory ${dataDir} is in use by another skill-registry process (${describeHolder(holder)}); ` +
        'stop that process first, or set SKILLREG_DATA_DIR to another directory (or DATABASE_URL to a PostgreSQL server)',
    );
    this.name = 'DataDirLockedError';
  }
}

export function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid} on host ${holder.hostname}, started ${holder.startedAt}: ${holder.command}`;
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Gives the lock up (once every opener in this process has released it). */
  release(): Promise<void>;
}

interface HeldLock {
  file: string;
  holder: LockHolder;
  openers: number;
  heartbeat: NodeJS.Timeout;
}

/** Locks this process holds, by the directory's real path: opening the same directory twice is fine. */
const held = new Map<string, HeldLock>();

function readProc(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat, after the command name (which may hold spaces and parentheses). */
function startTicksOf(pid: number | 'self'): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function pidNamespace(): string | undefined {
  try {
    // A symbolic link whose target names the namespace: `pid:[4026531836]`.
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

export function currentHolder(): LockHolder {
  const command = [path.basename(process.argv0 || 'node'), ...process.argv.slice(1)].join(' ').slice(0, 300);
  const holder: LockHolder = {
    pid: process.pid,
    hostname: os.hostname(),
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    command,
  };
  const namespace = pidNamespace();
  const bootId = readProc('/proc/sys/kernel/random/boot_id');
  const startTicks = startTicksOf('self');
  if (namespace) holder.pidNamespace = namespace;
  if (bootId) holder.bootId = bootId;
  if (startTicks) holder.startTicks = startTicks;
  return holder;
}

/** The holder's process can be checked from here: the same PID namespace of the same boot. */
function sameProcessSpace(holder: LockHolder, self: LockHolder): boolean {
  if (holder.pidNamespace || self.pidNamespace) {
    return holder.pidNamespace === self.pidNamespace && holder.bootId === self.bootId;
  }
  return holder.hostname === self.hostname;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

type Verdict = { state: 'held' } | { state: 'stale' } | { state: 'unknown'; touchedAt: number };

function judge(holder: LockHolder, self: LockHolder, touchedAt: number, staleAfterMs: number): Verdict {
  if (sameProcessSpace(holder, self)) {
    if (holder.pid === self.pid) {
      // This very process holds it (another opener), or an earlier process that had our PID, as
      // PID 1 of a restarted container has.
      return holder.startTicks === self.startTicks ? { state: 'held' } : { state: 'stale' };
    }
    if (!processAlive(holder.pid)) return { state: 'stale' };
    const ticks = holder.startTicks && startTicksOf(holder.pid);
    if (ticks && ticks !== holder.startTicks) return { state: 'stale' };
    return { state: 'held' };
  }
  return Date.now() - touchedAt > staleAfterMs ? { state: 'stale' } : { state: 'unknown', touchedAt };
}

async function readHolder(file: string): Promise<{ holder?: LockHolder; touchedAt: number } | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    try {
      const holder = JSON.parse(text) as LockHolder;
      return typeof holder.pid === 'number'
        ? { holder, touchedAt: info.mtimeMs }
        : { touchedAt: info.mtimeMs };
    } catch {
      return { touchedAt: info.mtimeMs };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LockOptions {
  /** Called once while waiting to see whether a lock from another machine or container is alive. */
  onWait?: (holder: LockHolder, staleInMs: number) => void;
  /** Test hooks: the holder recorded, and the staleness timings. */
  holder?: LockHolder;
  heartbeatMs?: number;
  staleAfterMs?: number;
}

/**
 * Takes the lock of `dataDir` (created if missing), or throws DataDirLockedError naming the holder.
 * Taking over a stale lock is guarded twice: the stale file is removed only while it still holds the
 * holder judged stale, and the new lock is read back after a moment, so of two processes that raced
 * for the same stale lock exactly one goes on.
 */
export async function lockDataDir(dataDir: string, options: LockOptions = {}): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const dir = await realpath(dataDir);
  const already = held.get(dir);
  if (already) {
    already.openers += 1;
    return releaser(dir, already);
  }
  const self = options.holder ?? currentHolder();
  const file = path.join(dir, LOCK_FILE);
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS;
  const content = `${JSON.stringify(self, null, 2)}\n`;
  let waited = false;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await tryCreate(file, content)) {
      await sleep(50);
      const check = await readHolder(file);
      if (check?.holder && check.holder.pid === self.pid && check.holder.startedAt === self.startedAt) {
        const lock: HeldLock = { file, holder: self, openers: 1, heartbeat: heartbeat(file, heartbeatMs) };
        held.set(dir, lock);
        return releaser(dir, lock);
      }
      if (check?.holder) throw new DataDirLockedError(dir, check.holder);
      continue;
    }
    const current = await readHolder(file);
    if (!current) continue; // released meanwhile: try again
    if (!current.holder) {
      // Being written by another process, or left empty by a crash mid-write.
      if (Date.now() - current.touchedAt < 2_000) {
        await sleep(100);
        continue;
      }
      await removeIfUnchanged(file, undefined);
      continue;
    }
    const verdict = judge(current.holder, self, current.touchedAt, staleAfterMs);
    if (verdict.state === 'held') throw new DataDirLockedError(dir, current.holder);
    if (verdict.state === 'stale') {
      await removeIfUnchanged(file, current.holder);
      continue;
    }
    // Another machine's or container's lock, touched recently: alive if it is touched again.
    if (!waited) {
      waited = true;
      options.onWait?.(current.holder, staleAfterMs - (Date.now() - verdict.touchedAt));
    }
    const before = verdict.touchedAt;
    await sleep(Math.min(heartbeatMs * 2, Math.max(100, staleAfterMs - (Date.now() - before)) + 50));
    const after = await readHolder(file);
    if (after?.holder && after.touchedAt > before && after.holder.startedAt === current.holder.startedAt) {
      throw new DataDirLockedError(dir, current.holder);
    }
  }
  throw new Error(`could not take the lock of ${dir}: it keeps changing hands`);
}

/** Creates the lock file with its whole content at once (a hard link to a written temporary file). */
async function tryCreate(file: string, content: string): Promise<boolean> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, content, { flag: 'wx' });
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** Removes the lock file if it still names `expected` (or still has no holder), so a fresh lock is never removed. */
async function removeIfUnchanged(file: string, expected: LockHolder | undefined): Promise<void> {
  const now = await readHolder(file);
  if (!now) return;
  const same = expected
    ? now.holder?.pid === expected.pid && now.holder.startedAt === expected.startedAt
    : now.holder === undefined;
  if (same) await unlink(file).catch(() => {});
}

function heartbeat(file: string, everyMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => {});
  }, everyMs);
  timer.unref();
  return timer;
}

function releaser(dir: string, lock: HeldLock): DataDirLock {
  let released = false;
  return {
    dataDir: dir,
    async release() {
      if (released) return;
      released = true;
      lock.openers -= 1;
      if (lock.openers > 0) return;
      held.delete(dir);
      clearInterval(lock.heartbeat);
      await removeIfUnchanged(lock.file, lock.holder);
    },
  };
}
