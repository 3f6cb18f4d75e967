import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { MIGRATIONS_FOLDER, openDatabase } from '../../src/db/client.js';
import { adminAuth, testConfig } from '../helpers/context.js';
import { withDatabase } from '../helpers/global-setup.js';

// Migration 0006 moves every skill, version, tag, load and audit row into the `default` namespace.
// Each backend gets a database migrated to 0005 (the schema before namespaces), filled by SQL as
// that schema's service wrote it, then opened by today's service, which applies 0006 at start.

const BEFORE_NAMESPACES = 6; // migrations 0000-0005

/** A copy of the migrations folder holding only the first `count` migrations. */
async function olderMigrations(count: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skillreg-old-migrations-'));
  await mkdir(path.join(dir, 'meta'));
  const journal = JSON.parse(await readFile(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
    entries: { idx: number; tag: string }[];
  };
  const kept = journal.entries.slice(0, count);
  for (const entry of kept) {
    await copyFile(path.join(MIGRATIONS_FOLDER, `${entry.tag}.sql`), path.join(dir, `${entry.tag}.sql`));
  }
  await writeFile(path.join(dir, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: kept }));
  return dir;
}

/** What the service before namespaces had stored: two skills, versions, tags, loads, audit, a token. */
const OLD_DATA = `
  insert into skills (id, name, load_count, last_loaded_at, changed_revision)
    values ('00000000-0000-4000-8000-000000000001', 'old-pdf', 7, now(), 3),
           ('00000000-0000-4000-8000-000000000002', 'old-csv', 0, null, 4);
  insert into skill_versions (id, skill_id, version, digest, name, description, frontmatter, body,
      skill_md_size, total_size, file_count, tokens_description, tokens_body, published_by, yanked_at)
    values
      ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000001', '1.0.0',
       'sha256:${'a'.repeat(64)}', 'old-pdf', 'Reads PDF files.', '{"name":"old-pdf","description":"Reads PDF files."}',
       '# PDF v1', 80, 80, 1, 5, 3, 'token:ci', null),
      ('00000000-0000-4000-8000-0000000000a2', '00000000-0000-4000-8000-000000000001', '1.1.0',
       'sha256:${'b'.repeat(64)}', 'old-pdf', 'Reads PDF files, better.', '{"name":"old-pdf","description":"Reads PDF files, better."}',
       '# PDF v2', 90, 90, 1, 6, 3, 'token:ci', null),
      ('00000000-0000-4000-8000-0000000000b1', '00000000-0000-4000-8000-000000000002', '2.0.0',
       'sha256:${'c'.repeat(64)}', 'old-csv', 'Cleans CSV files.', '{"name":"old-csv","description":"Cleans CSV files."}',
       '# CSV', 70, 70, 1, 5, 2, 'token:ci', null);
  insert into dist_tags (skill_id, tag, version_id, pinned) values
    ('00000000-0000-4000-8000-000000000001', 'latest', '00000000-0000-4000-8000-0000000000a2', false),
    ('00000000-0000-4000-8000-000000000001', 'stable', '00000000-0000-4000-8000-0000000000a1', true),
    ('00000000-0000-4000-8000-000000000002', 'latest', '00000000-0000-4000-8000-0000000000b1', false);
  insert into audit_log (actor, action, skill, version, detail) values
    ('token:ci', 'publish', 'old-pdf', '1.0.0', '{}'),
    ('token:ci', 'tag', 'old-pdf', '1.0.0', '{"tag":"stable"}'),
    ('admin-token', 'token.create', null, null, '{"name":"ci"}');
  insert into tokens (name, scopes, secret_hash, prefix, created_by)
    values ('ci', '{publish}', '${'d'.repeat(64)}', 'skr_abcdef', 'admin-token');
  insert into search_feedback (term, skill, loads) values ('pdf', 'old-pdf', 3);
  update registry_state set revision = 4, loads_revision = 2 where id = 1;
`;

/** Asserts, through the service's HTTP API, that the old rows are all there, in `default`. */
async function expectMigrated(app: FastifyInstance, query: (text: string) => Promise<unknown[]>) {
  const catalogue = await app.inject({ url: '/skills' });
  expect(catalogue.statusCode).toBe(200);
  expect(
    catalogue.json().items.map((item: { name: string; version: string }) => [item.name, item.version]),
  ).toEqual([
    ['old-csv', '2.0.0'],
    ['old-pdf', '1.1.0'],
  ]);
  const versions = await app.inject({ url: '/skills/old-pdf/versions' });
  expect(versions.json().map((row: { version: string; tags: string[] }) => [row.version, row.tags])).toEqual([
    ['1.1.0', ['latest']],
    ['1.0.0', ['stable']],
  ]);
  const stable = await app.inject({ url: '/skills/old-pdf/content?tag=stable' });
  expect(stable.body).toBe('# PDF v1');

  const namespaces = await app.inject({ url: '/namespaces' });
  expect(namespaces.statusCode).toBe(200);
  expect(
    namespaces.json().items.map((item: { name: string; skills: number }) => [item.name, item.skills]),
  ).toEqual([['default', 2]]);

  expect(await query(`select namespace, name, load_count::int as loads from skills order by name`)).toEqual([
    { namespace: 'default', name: 'old-csv', loads: 0 },
    { namespace: 'default', name: 'old-pdf', loads: 7 },
  ]);
  expect(await query(`select action, namespace from audit_log order by id`)).toEqual([
    { action: 'publish', namespace: 'default' },
    { action: 'tag', namespace: 'default' },
    { action: 'token.create', namespace: null },
  ]);
  expect(await query(`select name, namespaces from tokens`)).toEqual([{ name: 'ci', namespaces: null }]);
  expect(await query(`select term, skill, loads from search_feedback`)).toEqual([
    { term: 'pdf', skill: 'old-pdf', loads: 3 },
  ]);
  // The default namespace starts at the catalogue's revision, so later ETags keep going up.
  expect(await query(`select name, revision::int as revision from namespaces`)).toEqual([
    { name: 'default', revision: 4 },
  ]);

  // After the move, the same name can live in another namespace with its own version line.
  const published = await app.inject({
    method: 'POST',
    url: '/skills?namespace=team-a',
    headers: { ...adminAuth, 'content-type': 'text/markdown' },
    payload: '---\nname: old-pdf\ndescription: The team version.\n---\n# team',
  });
  expect(published.statusCode).toBe(201);
  expect(published.json().version).toBe('1.0.0');
  expect((await app.inject({ url: '/skills/old-pdf/content' })).body).toBe('# PDF v2');
}

const postgresUrl = inject('postgresUrl');
const skipReason = postgresUrl ? '' : ' [skipped: needs PostgreSQL; set TEST_DATABASE_URL or start Docker]';

describe.skipIf(!postgresUrl)(`migration 0006 (namespaces) on PostgreSQL${skipReason}`, () => {
  const name = `skillreg_ns_migrate_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  });

  it('moves every skill, version, tag, load and audit row of the previous schema into default', async () => {
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = withDatabase(postgresUrl!, name);
    const old = await olderMigrations(BEFORE_NAMESPACES);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder: old });
      await client.query(OLD_DATA);
    } finally {
      await client.end();
      await rm(old, { recursive: true, force: true });
    }
    const database = await openDatabase({ url, poolSize: 3 });
    const app = await buildApp({ config: testConfig(), database, logger: false });
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      await expectMigrated(app, async (text) => (await check.query(text)).rows);
    } finally {
      await check.end();
      await app.close();
      await database.close();
    }
  }, 60_000);
});

describe('migration 0006 (namespaces) on PGlite', () => {
  it('moves every skill, version, tag, load and audit row of the previous schema into default', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'skillreg-ns-migrate-'));
    const old = await olderMigrations(BEFORE_NAMESPACES);
    try {
      const client = await PGlite.create(dataDir, { extensions: { pg_trgm } });
      await migratePglite(drizzlePglite({ client }), { migrationsFolder: old });
      await client.exec(OLD_DATA);
      await client.close();

      const database = await openDatabase({ dataDir });
      const app = await buildApp({ config: testConfig(), database, logger: false });
      try {
        await expectMigrated(app, async (text) => {
          const result = await database.db.execute(text as never);
          return (result as unknown as { rows: unknown[] }).rows;
        });
      } finally {
        await app.close();
        await database.close();
      }
    } finally {
      await rm(old, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
