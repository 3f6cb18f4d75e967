#!/usr/bin/env node
// The `skillreg` command. In a clone it runs the TypeScript through tsx, so no build step is needed,
// unless dist/ holds the sources as they are now (`npm start` compiled them): the compiled code starts in
// half the time. The container image carries only the compiled dist/, and runs that.
import { existsSync } from 'node:fs';
import { distIsFresh } from './dist-state.js';

const fromSource =
  existsSync(new URL('../src/cli/main.ts', import.meta.url)) && !distIsFresh('dist/cli/main.js');
if (fromSource) (await import('tsx/esm/api')).register();
const { runCli, isServing } = await import(fromSource ? '../src/cli/main.ts' : '../dist/cli/main.js');
const { consoleOutput, exitWhenFlushed } = await import(
  fromSource ? '../src/cli/output.ts' : '../dist/cli/output.js'
);
const code = await runCli(process.argv.slice(2), consoleOutput());
// `serve` keeps running (it stops on SIGTERM/SIGINT). Every other command ends here with its exit code.
if (!isServing() || code !== 0) await exitWhenFlushed(code);
