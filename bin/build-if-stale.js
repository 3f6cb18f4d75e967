#!/usr/bin/env node
// `npm start`'s prestart: compiles src/ into dist/ with tsc (tsconfig.build.json), unless dist/ was built
// after the last change to anything it is built from. Even a no-op incremental tsc loads and hashes
// every source, which a restart should not wait for.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { distIsFresh, ROOT, STAMP } from './dist-state.js';

if (distIsFresh('dist/server.js')) process.exit(0);
// A dist/ whose entry point is gone (deleted by hand) is rebuilt in full: incremental tsc trusts its
// build info and would not write the missing file again.
if (!existsSync(path.join(ROOT, 'dist/server.js'))) rmSync(STAMP, { force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const args = ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', STAMP];
const result = spawnSync(process.execPath, [tsc, ...args], { cwd: ROOT, stdio: 'inherit' });
if (result.status !== 0) {
  // tsc writes its build info even when it reports errors: without it, the next start compiles (and
  // reports them) again instead of running what failed.
  rmSync(STAMP, { force: true });
  process.exit(result.status ?? 1);
}
// tsc leaves its build info alone when nothing changed: the stamp says "built after every input".
const now = new Date();
utimesSync(STAMP, now, now);
