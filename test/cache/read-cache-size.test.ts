/**
 * What the read cache keeps is measured by sizeOf, and only when it is kept: with the cache off
 * (SKILLREG_CACHE_MB=0) no answer is walked to be sized, since every allocation of a busy replica
 * is paid for again in garbage collection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sizeOf } from '../../src/cache/lru.js';
import { measured } from '../../src/cache/read-cache.js';
import { uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

/** A value whose size can be read only by reading its `counted` property, which counts the reads. */
function watched(): { value: { counted: string; nested: number[] }; reads: () => number } {
  let reads = 0;
  const value = { nested: [1, 2, 3] } as { counted: string; nested: number[] };
  Object.defineProperty(value, 'counted', {
    enumerable: true,
    get() {
      reads += 1;
      return 'abcd';
    },
  });
  return { value, reads: () => reads };
}

describe('sizeOf', () => {
  it('counts own keys, strings by length and nested values', () => {
    const inherited = Object.create({ ignored: 'x'.repeat(1000) }) as Record<string, unknown>;
    inherited.own = 'ab';
    // 32 for the object, 16 + 2 x key length per key, then the value: a string 16 + 2 x length.
    expect(sizeOf(inherited)).toBe(32 + (16 + 6) + (16 + 4));
    const value = { name: 'xy', list: [1, { flag: true }], when: new Date(0), none: null };
    const list = 32 + (8 + 8) + (8 + (32 + (16 + 8) + 8));
    expect(sizeOf(value)).toBe(32 + (16 + 8 + 20) + (16 + 8 + list) + (16 + 8 + 32) + (16 + 8 + 8));
  });

  it('is estimated once, when read', () => {
    const { value, reads } = watched();
    const sized = measured(value);
    expect(reads()).toBe(0);
    expect(sized.bytes).toBe(sizeOf({ counted: 'abcd', nested: [1, 2, 3] }));
    expect(sized.bytes).toBe(sized.bytes);
    expect(reads()).toBe(1);
  });
});

describe('the read cache sizes what it keeps', () => {
  let off: TestApp;
  let on: TestApp;

  beforeAll(async () => {
    [off, on] = await Promise.all([createTestApp({ SKILLREG_CACHE_MB: '0' }), createTestApp()]);
  });

  afterAll(async () => {
    await Promise.all([off?.close(), on?.close()]);
  });

  it('does not walk an answer it does not keep', async () => {
    const { value, reads } = watched();
    const key = uniqueName('size-off');
    expect(await off.app.registry.cache.immutable(key, async () => measured(value))).toBe(value);
    expect(reads()).toBe(0);
  });

  it('sizes an answer it keeps, and answers it again from memory', async () => {
    const { value, reads } = watched();
    const key = uniqueName('size-on');
    const before = on.app.registry.cache.stats().bytes;
    expect(await on.app.registry.cache.immutable(key, async () => measured(value))).toBe(value);
    expect(reads()).toBe(1);
    expect(on.app.registry.cache.stats().bytes).toBeGreaterThan(before);
    expect(await on.app.registry.cache.immutable(key, async () => measured({ other: true }))).toBe(value);
  });
});
