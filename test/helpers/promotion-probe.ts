/**
 * Run as a child process with --trace-gc-nvp (test/cache/young-values.test.ts): wraps 100,000 fresh
 * values as the read cache does with measured(), keeping only the last, so everything is garbage
 * within one scavenge unless the wrapper itself is made where scavenges do not reach.
 */
import { measured } from '../../src/cache/read-cache.js';

let last: unknown;
process.stdout.write('start\n');
for (let i = 0; i < 100_000; i++) {
  const rows = Array.from({ length: 50 }, (_, k) => ({ k, name: `skill-${k}` }));
  last = measured(rows);
}
process.stdout.write(`done ${last === undefined ? 0 : 1}\n`);
