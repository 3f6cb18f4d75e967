import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { CatalogueState } from '../../src/cache/catalogue-state.js';
import { ByteLru } from '../../src/cache/lru.js';
import { parseChangeMessage } from '../../src/db/change-notifications.js';
import { CatalogueRepository } from '../../src/storage/catalogue-repository.js';
import { SkillReads, SkillsRepository } from '../../src/storage/skills-repository.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp, type TestDatabase, testConfig } from '../helpers/context.js';
import { until } from '../helpers/polling.js';
import { type Replicas, startReplicas } from '../helpers/replicas.js';

const postgresUrl = inject('postgresUrl');

function bundle(name: string, description = `Cache test ${name}.`, body?: string) {
  return files({ 'SKILL.md': skillMd({ name, description, body }) });
}

function moveTag(app: FastifyInstance, name: string, tag: string, version: string) {
  return app.inject({
    method: 'PUT',
    url: `/skills/${name}/tags/${tag}`,
    headers: adminAuth,
    payload: { version },
  });
}

function yank(app: FastifyInstance, name: string, version: string) {
  return app.inject({ method: 'DELETE', url: `/skills/${name}/versions/${version}`, headers: adminAuth });
}

async function versionServed(app: FastifyInstance, url: string): Promise<string | undefined> {
  const res = await app.inject(url);
  return res.statusCode === 200 ? (res.headers['x-skill-version'] as string) : undefined;
}

async function catalogueNames(app: FastifyInstance, query = 'limit=500'): Promise<string[]> {
  const res = await app.inject(`/skills?${query}`);
  expect(res.statusCode).toBe(200);
  return (res.json().items as { name: string }[]).map((item) => item.name);
}

describe('ByteLru', () => {
  it('keeps the bytes it holds under its bound, evicting the least recently used first', () => {
    const lru = new ByteLru<string>(10_000, 5_000);
    for (let i = 0; i < 100; i++) {
      lru.set(`k${i}`, 'x'.repeat(500), 1_000);
      expect(lru.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(lru.size).toBeLessThan(10);
    expect(lru.stats().evictions).toBeGreaterThan(90);
    expect(lru.get('k0')).toBeUndefined();
    expect(lru.get('k99')).toBeDefined();
  });

  it('refreshes recency on a hit', () => {
    const lru = new ByteLru<number>(3_000, 3_000);
    lru.set('a', 1, 800);
    lru.set('b', 2, 800);
    lru.set('c', 3, 800);
    expect(lru.get('a')).toBe(1);
    lru.set('d', 4, 800);
    expect(lru.has('a')).toBe(true);
    expect(lru.has('b')).toBe(false);
  });

  it('never stores an entry larger than maxEntryBytes, and replacing an entry frees the old one', () => {
    const lru = new ByteLru<string>(10_000, 2_000);
    expect(lru.set('big', 'x', 5_000)).toBe(false);
    expect(lru.size).toBe(0);
    lru.set('a', 'one', 1_000);
    const before = lru.bytes;
    lru.set('a', 'two', 1_000);
    expect(lru.bytes).toBe(before);
    expect(lru.get('a')).toBe('two');
    lru.clear();
    expect(lru.bytes).toBe(0);
  });
});

describe('CatalogueState', () => {
  it('tells per-skill entries stale only when their skill (or an unknown write) changed after them', async () => {
    let row = { revision: 10, loadsRevision: 0 };
    const state = new CatalogueState(async () => row);
    await state.resync();
    expect(state.isFresh('a', 10)).toBe(true);
    state.observeChange(11, 'b');
    expect(state.isFresh('a', 10)).toBe(true);
    expect(state.isFresh('b', 10)).toBe(false);
    expect(state.isFresh('b', 11)).toBe(true);
    // A notification may arrive after a later local write: it still marks its skill.
    state.observeChange(13, 'c');
    state.observeChange(12, 'a');
    expect(state.peek().revision).toBe(13);
    expect(state.isFresh('a', 11)).toBe(false);
    // The row shows writes nobody told us about: every per-skill entry before them is stale.
    row = { revision: 20, loadsRevision: 3 };
    await state.resync();
    expect(state.isFresh('z', 13)).toBe(false);
    expect(state.isFresh('z', 20)).toBe(true);
    expect(state.peek()).toEqual({ revision: 20, loadsRevision: 3 });
  });

  it('reads the row on every call while not live, and answers from memory while live', async () => {
    const readRow = vi.fn(async () => ({ revision: 5, loadsRevision: 1 }));
    const state = new CatalogueState(readRow);
    await state.current();
    await state.current();
    expect(readRow).toHaveBeenCalledTimes(2);
    state.setLive(true);
    await state.current();
    expect(readRow).toHaveBeenCalledTimes(2);
  });

  it('parses change notifications', () => {
    expect(parseChangeMessage('r:12:my-skill')).toEqual({
      kind: 'revision',
      revision: 12,
      skill: 'my-skill',
    });
    expect(parseChangeMessage('r:12:')).toEqual({ kind: 'revision', revision: 12 });
    expect(parseChangeMessage('l:7')).toEqual({ kind: 'loads', loadsRevision: 7 });
    expect(parseChangeMessage('x:1')).toBeUndefined();
    expect(parseChangeMessage('r:nope:a')).toBeUndefined();
  });
});

describe('read cache in one app', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('answers a revalidation and a repeated read without a query, and a write shows on the next request', async () => {
    const name = uniqueName('cached');
    expect((await publish(ctx.app, bundle(name))).statusCode).toBe(201);
    const first = await ctx.app.inject('/skills?limit=500');
    expect(first.statusCode).toBe(200);
    await ctx.app.inject(`/skills/${name}/content`);

    const state = vi.spyOn(SkillsRepository.prototype, 'state');
    const catalogue = vi.spyOn(CatalogueRepository.prototype, 'catalogue');
    // Resolving a name to a version starts with this lookup.
    const resolve = vi.spyOn(SkillReads.prototype, 'idOf');
    try {
      const again = await ctx.app.inject({
        url: '/skills?limit=500',
        headers: { 'if-none-match': first.headers.etag as string },
      });
      expect(again.statusCode).toBe(304);
      expect((await ctx.app.inject('/skills?limit=500')).body).toBe(first.body);
      expect(await versionServed(ctx.app, `/skills/${name}/content`)).toBe('1.0.0');
      expect(state).not.toHaveBeenCalled();
      expect(catalogue).not.toHaveBeenCalled();
      expect(resolve).not.toHaveBeenCalled();
    } finally {
      state.mockRestore();
      catalogue.mockRestore();
      resolve.mockRestore();
    }

    const other = uniqueName('cached-new');
    expect((await publish(ctx.app, bundle(other))).statusCode).toBe(201);
    expect(await catalogueNames(ctx.app)).toContain(other);
    expect((await publish(ctx.app, bundle(name, 'Second version.'))).statusCode).toBe(201);
    expect(await versionServed(ctx.app, `/skills/${name}/content`)).toBe('1.0.1');
    expect((await moveTag(ctx.app, name, 'latest', '1.0.0')).statusCode).toBe(200);
    expect(await versionServed(ctx.app, `/skills/${name}/content`)).toBe('1.0.0');
    expect((await yank(ctx.app, name, '1.0.0')).statusCode).toBe(200);
    expect(await versionServed(ctx.app, `/skills/${name}/content`)).toBe('1.0.1');
    // Exact versions stay readable after a yank, and the metadata shows the yank at once.
    expect(await versionServed(ctx.app, `/skills/${name}/content?version=1.0.0`)).toBe('1.0.0');
    expect((await ctx.app.inject(`/skills/${name}?version=1.0.0`)).json().yanked).toBe(true);
  });

  it('keeps its memory under SKILLREG_CACHE_MB while serving every read correctly', async () => {
    const app = await buildApp({
      config: testConfig({ SKILLREG_CACHE_MB: '1' }),
      database: ctx.database,
      logger: false,
    });
    try {
      const names: string[] = [];
      for (let i = 0; i < 30; i++) {
        const name = uniqueName('big');
        names.push(name);
        // About 40 KB: under the largest entry a 1 MiB cache keeps (128 KiB), 30 of them well over 1 MiB.
        const body = `# ${name}\n\n${`${name} line of text for the cache bound test.\n`.repeat(500)}`;
        expect((await publish(app, bundle(name, 'Big body.', body))).statusCode).toBe(201);
      }
      for (let round = 0; round < 2; round++) {
        for (const name of names) {
          const res = await app.inject(`/skills/${name}/content`);
          expect(res.statusCode).toBe(200);
          expect(res.body.startsWith(`# ${name}`)).toBe(true);
          expect(app.registry.cache.stats().bytes).toBeLessThanOrEqual(1024 * 1024);
        }
      }
      expect(app.registry.cache.stats().evictions).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it('authorizes every request: a cached answer is never served to a caller the route refuses', async () => {
    const app = await buildApp({
      config: testConfig({ SKILLREG_READ_AUTH: 'true' }),
      database: ctx.database,
      logger: false,
    });
    try {
      const allowed = await app.inject({ url: '/skills', headers: adminAuth });
      expect(allowed.statusCode).toBe(200);
      expect((await app.inject('/skills')).statusCode).toBe(401);
      const etag = allowed.headers.etag as string;
      expect((await app.inject({ url: '/skills', headers: { 'if-none-match': etag } })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!postgresUrl)(
  'replicas on one PostgreSQL database (separate connections, LISTEN/NOTIFY)',
  () => {
    let replicas: Replicas;
    let testDatabase: TestDatabase;
    let a: FastifyInstance;
    let b: FastifyInstance;

    beforeAll(async () => {
      replicas = await startReplicas(2);
      testDatabase = replicas.testDatabase;
      [a, b] = replicas.apps as [FastifyInstance, FastifyInstance];
    });
    afterAll(async () => {
      await replicas?.close();
    });

    it('serves a publish, a tag move and a yank on A from B once the notification arrives (typically < 100 ms)', async () => {
      const delays: number[] = [];
      for (let round = 0; round < 5; round++) {
        const name = uniqueName('replica');
        // B has the catalogue cached before the write.
        expect(await catalogueNames(b)).not.toContain(name);
        expect((await publish(a, bundle(name))).statusCode).toBe(201);
        delays.push(await until(async () => (await catalogueNames(b)).includes(name)));

        expect((await publish(a, bundle(name, 'Second.'))).statusCode).toBe(201);
        expect(await versionServed(b, `/skills/${name}/content?tag=beta`)).toBeUndefined();
        expect((await moveTag(a, name, 'beta', '1.0.0')).statusCode).toBe(200);
        delays.push(
          await until(async () => (await versionServed(b, `/skills/${name}/content?tag=beta`)) === '1.0.0'),
        );

        expect(await versionServed(b, `/skills/${name}/content`)).toBe('1.0.1');
        expect((await yank(a, name, '1.0.1')).statusCode).toBe(200);
        delays.push(await until(async () => (await versionServed(b, `/skills/${name}/content`)) === '1.0.0'));
      }
      delays.sort((x, y) => x - y);
      const median = delays[Math.floor(delays.length / 2)]!;
      expect(median).toBeLessThan(100);
    });

    it('a replica whose listener is down reads the revision row on every request and is never stale', async () => {
      const feed = b.registry.cache.changeFeed!;
      expect(feed.isLive).toBe(true);
      // Kill the listening backend: the feed reconnects and resyncs by itself.
      const admin = new pg.Client({ connectionString: testDatabase.url });
      await admin.connect();
      try {
        await admin.query('select pg_terminate_backend($1)', [feed.backendPid]);
      } finally {
        await admin.end();
      }
      await until(async () => !b.registry.cache.state.live, 2_000);
      await until(async () => b.registry.cache.state.live, 5_000);
      const revived = uniqueName('revived');
      expect((await publish(a, bundle(revived))).statusCode).toBe(201);
      await until(async () => (await catalogueNames(b)).includes(revived));

      // Now take the feed down for good: every read checks the row, so no request is ever stale.
      await feed.close();
      expect(b.registry.cache.state.live).toBe(false);
      for (let round = 0; round < 5; round++) {
        const name = uniqueName('no-listener');
        expect(await catalogueNames(b)).not.toContain(name);
        expect((await publish(a, bundle(name))).statusCode).toBe(201);
        // The very next request, no polling.
        expect(await catalogueNames(b)).toContain(name);
        expect(await versionServed(b, `/skills/${name}/content`)).toBe('1.0.0');
        expect((await publish(a, bundle(name, 'Again.'))).statusCode).toBe(201);
        expect(await versionServed(b, `/skills/${name}/content`)).toBe('1.0.1');
        expect((await moveTag(a, name, 'stable', '1.0.0')).statusCode).toBe(200);
        expect(await versionServed(b, `/skills/${name}/content?tag=stable`)).toBe('1.0.0');
        expect((await yank(a, name, '1.0.1')).statusCode).toBe(200);
        expect(await versionServed(b, `/skills/${name}/content`)).toBe('1.0.0');
      }
    });
  },
);
