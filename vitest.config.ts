import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Node 22 and later keep V8's compiled code of every module they load on disk here, so the test workers
// and the CLIs and servers the tests spawn (which inherit the variable) compile the dependencies once per
// machine rather than once per process. Node 20 ignores it.
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'skillreg-test-compile-cache');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A worker runs its files one after another in one process: the app's modules are loaded once per
    // worker, not once per file. Tests are isolated by database and unique names, never by module
    // state; spies and stubbed variables are undone after every test.
    isolate: false,
    restoreMocks: true,
    unstubEnvs: true,
    // Three files at a time on two cores: much of a file's time is spent waiting on child processes (servers,
    // CLIs, git, the agent hosts) or on timers, and a third worker fills those gaps (docs/PERFORMANCE.md).
    maxWorkers: 3,
  },
});
