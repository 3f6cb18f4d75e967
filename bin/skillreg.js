#!/usr/bin/env node
// The `skillreg` command. The package runs its TypeScript through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
const { consoleOutput } = await import('../src/cli/output.ts');
const code = await runCli(process.argv.slice(2), consoleOutput());
// `serve` keeps running; every other command ends here with its exit code.
if (process.argv[2] !== 'serve') process.exit(code);
