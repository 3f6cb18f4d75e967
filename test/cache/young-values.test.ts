/**
 * What wraps a read's value must let the value die young. An object literal with a getter (what
 * measured() and CachedReads.of() once answered) keeps what it refers to through every scavenge on
 * Node 20, so a catalogue page's rows were collected only by a full collection: under uncached load
 * one ran every second (docs/PERFORMANCE.md, seventh pass).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/context.js';

const run = promisify(execFile);
const PROBE = fileURLToPath(new URL('../helpers/promotion-probe.ts', import.meta.url));

/** Bytes the scavenges of `script` promoted to the old generation, from V8's --trace-gc-nvp lines. */
async function promotedBytes(script: string): Promise<number> {
  const flags = ['--max-semi-space-size=16', '--min-semi-space-size=16', '--trace-gc-nvp'];
  const { stdout } = await run(process.execPath, [...flags, '--import', 'tsx', script], {
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(stdout).toContain('done 1');
  // Scavenges from the loop's start on: loading the modules promotes what stays loaded.
  let promoted = 0;
  for (const match of stdout.slice(stdout.indexOf('start\n')).matchAll(/gc=s .*?\bpromoted=(\d+)/g))
    promoted += Number(match[1]);
  return promoted;
}

describe('values die young', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('measured() lets 100,000 wrapped values be collected by scavenges', async () => {
    // On Node 20 the literal with a getter promoted 145 MB of them; the class about 3 MB.
    expect(await promotedBytes(PROBE)).toBeLessThan(20_000_000);
  }, 60_000);

  it('a described read is a class instance, not an object literal with a getter', async () => {
    const read = await ctx.app.registry.reads.cached.of({ read: 'probe', on: { kind: 'catalogue' } });
    expect(Object.getPrototypeOf(read)).not.toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(read, 'etag')).toBeUndefined();
    expect(read.etag).toMatch(/"$/);
  });
});
