#!/usr/bin/env node
// `npm start`'s prestart: compiles src/ into dist/ with tsc (tsconfig.build.json), unless dist/ was built
// after the last change to anything it is built from. Even a no-op incremental tsc loads and hashes
// every source, which a restart should not wait for.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = path.join(root, 'dist/.tsbuildinfo');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

/** The latest change under a path; a folder's own time counts too, so a deleted file is a change. */
function latestChange(target) {
  const stats = statSync(target, { throwIfNoEntry: false });
  if (!stats) return 0;
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs;
  for (const entry of readdirSync(target)) latest = Math.max(latest, latestChange(path.join(target, entry)));
  return latest;
}

// A dist/ whose entry point is gone (deleted by hand) is rebuilt in full: incremental tsc trusts its
// build info and would not write the missing file again.
if (!existsSync(path.join(root, 'dist/server.js'))) rmSync(stamp, { force: true });
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(...inputs.map((input) => latestChange(path.join(root, input))));
if (built > changed) process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const args = ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', stamp];
const result = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// tsc leaves its build info alone when nothing changed: the stamp says "built after every input".
const now = new Date();
utimesSync(stamp, now, now);
