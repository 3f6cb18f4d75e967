import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RepositoryCache } from '../../src/git/repository-cache.js';

// The built repositories on disk: one build per key, the total bounded, a folder being read never removed.

const writeBytes = (bytes: number) => async (directory: string) => {
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, 'pack'), Buffer.alloc(bytes));
};

describe('RepositoryCache', () => {
  let cache: RepositoryCache;
  afterEach(() => cache?.close());

  it('builds a key once, however many ask at the same time', async () => {
    cache = new RepositoryCache({ maxBytes: 1 << 20 });
    let builds = 0;
    const build = async (directory: string) => {
      builds += 1;
      await writeBytes(10)(directory);
    };
    const held = await Promise.all([cache.hold('a', build), cache.hold('a', build), cache.hold('a', build)]);
    expect(builds).toBe(1);
    expect(new Set(held.map((one) => one.directory)).size).toBe(1);
    for (const one of held) one.release();
  });

  it('removes the least recently used folders past the bound, never one being read, and rebuilds on demand', async () => {
    cache = new RepositoryCache({ maxBytes: 2_500 });
    const first = await cache.hold('first', writeBytes(1_000));
    first.release();
    const second = await cache.hold('second', writeBytes(1_000));
    // Still read while the third is built: it must stay.
    const third = await cache.hold('third', writeBytes(1_000));
    expect(existsSync(first.directory)).toBe(false);
    expect(existsSync(second.directory)).toBe(true);
    expect(cache.usage()).toEqual({ bytes: 2_000, repositories: 2 });
    second.release();
    third.release();
    let rebuilt = 0;
    const again = await cache.hold('first', async (directory) => {
      rebuilt += 1;
      await writeBytes(1_000)(directory);
    });
    expect(rebuilt).toBe(1);
    expect(existsSync(again.directory)).toBe(true);
    again.release();
    expect(cache.peek('no-such-key')).toBeUndefined();
  });

  it('leaves no folder behind when a build fails, and the next ask builds again', async () => {
    cache = new RepositoryCache({ maxBytes: 1 << 20 });
    await expect(
      cache.hold('broken', async (directory) => {
        await writeBytes(10)(directory);
        throw new Error('fast-import failed');
      }),
    ).rejects.toThrow('fast-import failed');
    const ok = await cache.hold('broken', writeBytes(10));
    expect(existsSync(ok.directory)).toBe(true);
    ok.release();
  });
});
