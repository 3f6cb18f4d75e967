#!/usr/bin/env node
// The entry of the standalone `skillreg` the registry serves at /cli (src/cli-dist): the same commands as
// bin/skillreg.js, bundled by esbuild into one file that needs nothing but Node 20+.
import { runCli } from './main.js';
import { consoleOutput } from './output.js';

const code = await runCli(process.argv.slice(2), consoleOutput());
// As bin/skillreg.js: end with the exit code once stdout and stderr are flushed, without waiting for
// idle keep-alive sockets. `serve` is not in this build, so every command ends here.
await Promise.all([
  new Promise((resolve) => process.stdout.write('', resolve)),
  new Promise((resolve) => process.stderr.write('', resolve)),
]);
process.exit(code);
