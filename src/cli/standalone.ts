#!/usr/bin/env node
// The entry of the standalone `skillreg` the registry serves at /cli (src/cli-dist): the same commands as
// bin/skillreg.js, bundled by esbuild into one file that needs nothing but Node 20+. `serve` is not in
// this build, so every command ends here.
import { runCli } from './main.js';
import { consoleOutput, exitWhenFlushed } from './output.js';

await exitWhenFlushed(await runCli(process.argv.slice(2), consoleOutput()));
