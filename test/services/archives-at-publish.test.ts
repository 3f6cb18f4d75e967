import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seedSkills } from '../../bench/seed.js';
import { writeZip } from '../../src/bundle/archive-write.js';
import { blobs, skillVersions, versionArchives } from '../../src/db/schema.js';
import { DEFAULT_SCOPE } from '../../src/domain/scope.js';
import { backfillArchives } from '../../src/server.js';
import { PUBLISH_ARCHIVE_FORMAT } from '../../src/services/archives.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { sha256Hex } from '../helpers/hashing.js';

// The discovery index lists every current skill with the sha256 of its zip. Publishes build and store
// that zip in their own transaction, so the index finds every archive built; versions stored before
// (a migrated or bulk-loaded catalogue) are built by the index in bounded batches, once.

const INDEX = '/.well-known/agent-skills/index.json';

interface IndexEntry {
  name: string;
  url: string;
  digest: string;
}

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const sha256 = sha256Hex;

async function storedArchiveOf(name: string, version = '1.0.0') {
  const { db } = ctx.database;
  const [row] = await db
    .select({ versionId: skillVersions.id, sha256: versionArchives.blobDigest, bytes: blobs.content })
    .from(skillVersions)
    .innerJoin(
      versionArchives,
      and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, 'zip')),
    )
    .innerJoin(blobs, eq(blobs.digest, versionArchives.blobDigest))
    .where(and(eq(skillVersions.name, name), eq(skillVersions.version, version)));
  return row;
}

async function index(host = 'registry.test') {
  const res = await ctx.app.inject({ url: INDEX, headers: { host } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { skills: IndexEntry[] }).skills;
}

describe('archives built at publish', () => {
  it('the index format is the one publishes build', () => {
    expect(PUBLISH_ARCHIVE_FORMAT).toBe('zip');
  });

  it('a publish stores the zip archive row in its transaction: the exact bytes the index lists and serves', async () => {
    const name = uniqueName('at-publish');
    const bundle = files({
      'SKILL.md': skillMd({ name, description: 'Archived when published.' }),
      'scripts/run.sh': '#!/bin/sh\necho run\n',
      'references/ü-notes.md': '# Notes\n',
    });
    bundle.find((file) => file.path === 'scripts/run.sh')!.mode = 0o755;
    const res = await publish(ctx.app, bundle);
    expect(res.statusCode, res.body).toBe(201);

    const stored = await storedArchiveOf(name);
    expect(stored, 'version_archives row').toBeDefined();
    expect(stored!.sha256).toBe(sha256(stored!.bytes));
    // The same deterministic bytes a later (lazy) build from the stored files would make.
    const files_ = await ctx.app.registry.repositories.skills.bundleFiles(stored!.versionId);
    expect(sha256(await writeZip(files_))).toBe(stored!.sha256);

    const archive = vi.spyOn(ctx.app.registry.archives, 'archive');
    const buildArchives = vi.spyOn(ctx.app.registry.archives, 'buildMissing');
    try {
      const entry = (await index()).find((item) => item.name === name)!;
      expect(entry.digest).toBe(`sha256:${stored!.sha256}`);
      expect(buildArchives).not.toHaveBeenCalled();
      const served = await ctx.app.inject({ url: new URL(entry.url).pathname + new URL(entry.url).search });
      expect(served.statusCode).toBe(200);
      expect(sha256(served.rawPayload)).toBe(stored!.sha256);
      expect(archive).toHaveBeenCalledTimes(1); // found stored, not built: no new rows below
    } finally {
      archive.mockRestore();
      buildArchives.mockRestore();
    }
    const [{ count }] = (await ctx.database.db
      .select({ count: sql<number>`count(*)::int` })
      .from(versionArchives)
      .where(eq(versionArchives.versionId, stored!.versionId))) as [{ count: number }];
    // As published and installable: one blob, as SKILL.md needed no completing.
    expect(count).toBe(2);
  });

  it('an identical republish, a refused publish and a new version each store what they should', async () => {
    const name = uniqueName('republish');
    const bundle = files({ 'SKILL.md': skillMd({ name, description: 'One.' }) });
    expect((await publish(ctx.app, bundle)).statusCode).toBe(201);
    const countArchives = async () =>
      (
        (await ctx.database.db.select({ count: sql<number>`count(*)::int` }).from(versionArchives)) as [
          { count: number },
        ]
      )[0].count;
    const before = await countArchives();
    expect((await publish(ctx.app, bundle)).statusCode).toBe(200);
    expect((await publish(ctx.app, bundle, { query: 'version=1.0.0' })).statusCode).toBe(200);
    const conflict = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Two.' }) }), {
      query: 'version=1.0.0',
    });
    expect(conflict.statusCode).toBe(409);
    expect(await countArchives()).toBe(before);
    expect(
      (await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Two.' }) }))).statusCode,
    ).toBe(201);
    expect(await countArchives()).toBe(before + 2);
    expect(await storedArchiveOf(name, '1.0.1')).toBeDefined();
  });
});

describe('versions stored without archives (before this, or bulk-loaded)', () => {
  const SEEDED = 260;

  it('are built by the index in bounded batches, once, without holding up other requests', async () => {
    // Bulk-loaded straight into the tables, as a migration or bench/seed.ts does: no archives.
    await seedSkills(ctx.database, { count: SEEDED, start: 900_000, batch: 100, bodyBytes: 1_500 });
    // A publish through the service, so this process hears of the new revision.
    const marker = uniqueName('after-seed');
    expect(
      (await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: marker, description: 'Marker.' }) })))
        .statusCode,
    ).toBe(201);
    const { db } = ctx.database;
    const missing = async () =>
      (
        (await db.execute(sql`
          select count(*)::int as n from skill_versions v
          where not exists (select 1 from version_archives a where a.version_id = v.id and a.format = 'zip')`)) as unknown as {
          rows: { n: number }[];
        }
      ).rows[0]!.n;
    expect(await missing()).toBe(SEEDED);

    const repository = ctx.app.registry.archives;
    const buildArchives = vi.spyOn(repository, 'buildMissing');
    const single = vi.spyOn(repository, 'archive');
    const transaction = vi.spyOn(db, 'transaction');
    try {
      let indexDone = 0;
      const first = ctx.app.inject({ url: INDEX, headers: { host: 'one.test' } }).then((res) => {
        indexDone = performance.now();
        return res;
      });
      // Another origin at the same time queues behind the running build instead of building again.
      const second = ctx.app.inject({ url: INDEX, headers: { host: 'two.test' } });
      // Other requests are answered meanwhile.
      const live = await ctx.app.inject('/livez');
      const liveDone = performance.now();
      expect(live.statusCode).toBe(200);
      const [one, two] = await Promise.all([first, second]);
      expect(one.statusCode, one.body).toBe(200);
      expect(two.statusCode, two.body).toBe(200);
      expect(liveDone).toBeLessThan(indexDone);

      expect(await missing()).toBe(0);
      expect(single).not.toHaveBeenCalled();
      // One build per request; the second found everything stored by the first.
      expect(buildArchives).toHaveBeenCalledTimes(2);
      // Batches: 260 versions of ~1.5 KB are three batches of at most 100, one transaction each.
      expect(transaction.mock.calls.length).toBe(3);

      const entries = (one.json() as { skills: IndexEntry[] }).skills;
      expect(entries.length).toBeGreaterThan(SEEDED);
      expect(entries.length).toBe((await ctx.app.registry.discovery.currentArchives(DEFAULT_SCOPE)).length);
      const digests = new Map(entries.map((entry) => [entry.name, entry.digest]));
      const seededRows = await db
        .select({ name: skillVersions.name, sha256: versionArchives.blobDigest })
        .from(skillVersions)
        .innerJoin(
          versionArchives,
          and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, 'installable.zip')),
        )
        .where(eq(skillVersions.publishedBy, 'bench-seed'));
      expect(seededRows).toHaveLength(SEEDED);
      for (const row of seededRows) expect(digests.get(row.name)).toBe(`sha256:${row.sha256}`);
      // A sample of the served bytes hash to what the index says.
      for (const entry of entries.filter((_, i) => i % 50 === 0)) {
        const url = new URL(entry.url);
        const res = await ctx.app.inject({ url: url.pathname + url.search });
        expect(`sha256:${sha256(res.rawPayload)}`).toBe(entry.digest);
      }
      expect((two.json() as { skills: IndexEntry[] }).skills.map((entry) => entry.digest)).toEqual(
        entries.map((entry) => entry.digest),
      );
    } finally {
      buildArchives.mockRestore();
      single.mockRestore();
      transaction.mockRestore();
    }

    // Nothing left to build: the next index request builds nothing.
    const again = vi.spyOn(repository, 'buildMissing');
    try {
      await index('three.test');
      expect(again).not.toHaveBeenCalled();
    } finally {
      again.mockRestore();
    }
  });
});

describe('backfillArchives (run by startServer once the service listens)', () => {
  it('builds the archives of versions stored without one, so the index has none left to build', async () => {
    const other = await createTestApp();
    try {
      await seedSkills(other.database, { count: 30, start: 950_000, batch: 30, bodyBytes: 800 });
      const repository = other.app.registry.archives;
      const missing = async () =>
        (await other.app.registry.discovery.currentArchives(DEFAULT_SCOPE)).filter(
          (entry) => entry.archiveSha256 === null,
        ).length;
      expect(await missing()).toBe(30);
      await backfillArchives(other.app);
      expect(await missing()).toBe(0);
      const build = vi.spyOn(repository, 'buildMissing');
      try {
        const res = await other.app.inject(INDEX);
        expect(res.statusCode).toBe(200);
        expect((res.json() as { skills: IndexEntry[] }).skills).toHaveLength(30);
        expect(build).not.toHaveBeenCalled();
      } finally {
        build.mockRestore();
      }
      // Nothing to do is cheap and says nothing.
      await backfillArchives(other.app);
    } finally {
      await other.close();
    }
  });
});
