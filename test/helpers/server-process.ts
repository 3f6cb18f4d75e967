import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

export { freePort } from '../../bench/processes.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Dockerfile {
  /** Instructions of every stage, continuation lines joined, comments dropped. */
  instructions: { keyword: string; args: string }[];
  /** Instructions of the last stage (the image that runs). */
  runtime: { keyword: string; args: string }[];
  /** The runtime stage's CMD, exec form. */
  cmd: string[];
  /** The runtime stage's ENTRYPOINT, exec form ([] when none). */
  entrypoint: string[];
  /** The HEALTHCHECK's command, exec form. */
  healthcheck: string[];
  healthcheckOptions: string;
  /** ENV of the runtime stage. */
  env: Record<string, string>;
}

/** Reads the repository's Dockerfile: enough of the syntax to check what the image runs. */
export function readDockerfile(file = path.join(REPO_ROOT, 'Dockerfile')): Dockerfile {
  const logical: string[] = [];
  let current = '';
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) continue; // comments, also between continuation lines
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = '';
  }
  const instructions = logical.map((line) => {
    const match = /^(\S+)\s*(.*)$/s.exec(line)!;
    return { keyword: match[1]!.toUpperCase(), args: match[2]!.trim() };
  });
  const lastFrom = instructions.map((i) => i.keyword).lastIndexOf('FROM');
  const runtime = instructions.slice(lastFrom);
  const execForm = (args: string): string[] => {
    const parsed: unknown = JSON.parse(args);
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
      throw new Error(`not an exec-form array: ${args}`);
    }
    return parsed;
  };
  const cmds = runtime.filter((i) => i.keyword === 'CMD');
  const entrypoints = runtime.filter((i) => i.keyword === 'ENTRYPOINT');
  const healthchecks = runtime.filter((i) => i.keyword === 'HEALTHCHECK');
  const healthcheck = /^(.*?)\bCMD\s+(\[.*\])$/s.exec(healthchecks.at(-1)?.args ?? '');
  const env: Record<string, string> = {};
  for (const instruction of runtime.filter((i) => i.keyword === 'ENV')) {
    for (const [, key, value] of instruction.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) {
      env[key!] = value!.replace(/^"(.*)"$/, '$1');
    }
  }
  return {
    instructions,
    runtime,
    cmd: cmds.length ? execForm(cmds.at(-1)!.args) : [],
    entrypoint: entrypoints.length ? execForm(entrypoints.at(-1)!.args) : [],
    healthcheck: healthcheck ? execForm(healthcheck[2]!) : [],
    healthcheckOptions: healthcheck?.[1]?.trim() ?? '',
    env,
  };
}

/** Runs an exec-form command the way the container would (`node` is this Node binary). */
export function spawnCommand(
  argv: string[],
  env: Record<string, string | undefined>,
  cwd = REPO_ROOT,
): ChildProcess & { output: () => string } {
  const [command, ...args] = argv;
  const child = spawn(command === 'node' ? process.execPath : command!, args, {
    cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return Object.assign(child, { output: () => output });
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Runs a command to completion and answers its exit code. */
export async function runToExit(
  argv: string[],
  env: Record<string, string | undefined>,
  timeoutMs = 15_000,
  cwd = REPO_ROOT,
): Promise<number | null> {
  const child = spawnCommand(argv, env, cwd);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const { code } = await exitOf(child);
  clearTimeout(timer);
  return code;
}

/** The environment a spawned server gets: this process's, without anything that selects a database. */
export function baseEnv(overrides: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('SKILLREG_') || key === 'DATABASE_URL' || key === 'TEST_DATABASE_URL') delete env[key];
  }
  delete env.NODE_OPTIONS; // vitest's own loader options must not leak into the child
  return { ...env, LOG_LEVEL: 'info', ...overrides };
}

export async function waitForLive(
  url: string,
  child: ChildProcess & { output: () => string },
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`server exited with ${child.exitCode} before it was live:\n${child.output()}`);
    }
    try {
      const res = await fetch(`${url}/livez`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`server not live after ${timeoutMs} ms:\n${child.output()}`);
}

/**
 * Fills an empty data directory with the migrated PGlite cluster of this run (global-setup's snapshot), for
 * the suites whose server processes test something other than a first start: each start then opens a
 * database instead of creating and migrating one. A no-op when the run uses PostgreSQL.
 */
export async function withMigratedCluster(dataDir: string): Promise<void> {
  const snapshot = inject('pgliteSnapshot');
  if (!snapshot) return;
  const child = spawnCommand(['tar', '-xf', snapshot, '-C', dataDir], { ...process.env });
  const { code } = await exitOf(child);
  if (code !== 0) throw new Error(`could not unpack the PGlite snapshot into ${dataDir}:\n${child.output()}`);
}

export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** True when a new TCP connection to the port is refused (nothing listens any more). */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * Lays out the runtime image's WORKDIR in a temporary folder by following the runtime stage's COPY
 * instructions: `--from=build` output is the repository's dist/ (built as `npm run build` does), `--from=deps`
 * node_modules is the repository's, and every other source is copied from the repository.
 */
export async function layOutImage(
  dockerfile: Dockerfile,
  into: string,
): Promise<{ build: { code: number | null; output: string } }> {
  let build = { code: 0 as number | null, output: '' };
  for (const copy of dockerfile.runtime.filter((i) => i.keyword === 'COPY')) {
    const words = copy.args.split(/\s+/);
    const from = /^--from=(\S+)$/.exec(words[0]!)?.[1];
    const paths = words.filter((word) => !word.startsWith('--'));
    const destination = paths.at(-1)!;
    if (from === 'build') {
      // The build stage runs `npm run build` (tsc -p tsconfig.build.json) in /app; its dist/ lands here.
      // The same compilation as npm start's prestart, which test/helpers/global-setup.ts ran once for
      // the whole run: it is redone here only if a source changed since.
      const child = spawnCommand(['node', 'bin/build-if-stale.js'], { ...process.env });
      const { code } = await exitOf(child);
      build = { code, output: child.output() };
      if (code === 0) cpSync(path.join(REPO_ROOT, 'dist'), path.join(into, destination), { recursive: true });
    } else if (from === 'deps') {
      symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(into, destination), 'dir');
    } else if (from !== undefined) {
      throw new Error(`unknown stage in ${copy.args}`);
    } else {
      for (const source of paths.slice(0, -1)) {
        const target = destination.endsWith('/')
          ? path.join(into, destination, source)
          : path.join(into, destination);
        cpSync(path.join(REPO_ROOT, source), target, { recursive: true });
      }
    }
  }
  return { build };
}

/** Every process below `pid` (children, their children...), read from /proc (Linux). */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** True while a process with this PID exists and is not a zombie. */
export function processRunning(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}

/** Waits until none of `pids` runs; answers the milliseconds it took, or Infinity after `timeoutMs`. */
export async function allGone(pids: number[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (!pids.some(processRunning)) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Number.POSITIVE_INFINITY;
}
