import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most test time is waiting on PostgreSQL, PGlite or child processes: two files at a time on two cores.
    maxWorkers: 2,
  },
});
