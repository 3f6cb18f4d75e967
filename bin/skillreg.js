#!/usr/bin/env node
// The `skillreg` command. The package runs its TypeScript through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { runCli, isServing } = await import('../src/cli/main.ts');
const { consoleOutput } = await import('../src/cli/output.ts');
const code = await runCli(process.argv.slice(2), consoleOutput());
// `serve` keeps running (it stops on SIGTERM/SIGINT). Every other command ends here with its exit code,
// without waiting for idle keep-alive sockets or database pools, once stdout and stderr are flushed.
if (!isServing() || code !== 0) {
  await Promise.all([
    new Promise((resolve) => process.stdout.write('', resolve)),
    new Promise((resolve) => process.stderr.write('', resolve)),
  ]);
  process.exit(code);
}
