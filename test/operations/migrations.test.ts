import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../src/db/client.js';
import { withDatabase } from '../helpers/global-setup.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const postgresUrl = inject('postgresUrl');

const TABLES = [
  'audit_log',
  'blobs',
  'dist_tags',
  'registry_state',
  'skill_versions',
  'skills',
  'tokens',
  'version_files',
];

async function migrationCount(): Promise<number> {
  const journal = JSON.parse(
    await readFile(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8'),
  ) as {
    entries: unknown[];
  };
  const sqlFiles = (await readdir(MIGRATIONS_FOLDER)).filter((file) => file.endsWith('.sql'));
  expect(journal.entries.length).toBe(sqlFiles.length);
  return sqlFiles.length;
}

/** `npm run db:migrate`, i.e. `tsx src/scripts/migrate.ts`, as its own process. */
function runMigrate(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/scripts/migrate.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const skipReason = postgresUrl ? '' : ' [skipped: needs PostgreSQL; set TEST_DATABASE_URL or start Docker]';

describe.skipIf(!postgresUrl)(`migrations on PostgreSQL${skipReason}`, () => {
  const name = `skillreg_migrate_${randomBytes(6).toString('hex')}`;
  let url = '';
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    url = withDatabase(postgresUrl, name);
  });
  afterAll(async () => {
    await admin?.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin?.end();
  });

  async function inspect() {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const applied = await client.query('select hash, created_at from drizzle.__drizzle_migrations');
      const tables = await client.query(
        `select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
      );
      const state = await client.query('select id, revision from registry_state');
      const extensions = await client.query(
        `select count(*)::int as n from pg_extension where extname = 'pg_trgm'`,
      );
      return {
        applied: applied.rows.length,
        hashes: applied.rows.map((row) => row.hash as string),
        tables: tables.rows.map((row) => row.table_name as string),
        state: state.rows,
        trgm: extensions.rows[0].n as number,
      };
    } finally {
      await client.end();
    }
  }

  it('two processes migrating an empty database at the same time both succeed, and the schema exists once', async () => {
    const expected = await migrationCount();
    const [first, second] = await Promise.all([
      runMigrate({ DATABASE_URL: url }),
      runMigrate({ DATABASE_URL: url }),
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(first.stdout).toContain('migrations applied');
    expect(second.stdout).toContain('migrations applied');

    const after = await inspect();
    expect(after.applied).toBe(expected);
    expect(new Set(after.hashes).size).toBe(expected);
    expect(after.tables).toEqual(expect.arrayContaining(TABLES));
    expect(after.state).toEqual([{ id: 1, revision: '0' }]);
    expect(after.trgm).toBe(1);
  }, 120_000);

  it('migrating an already-migrated database is a no-op', async () => {
    const before = await inspect();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`insert into skills (name) values ('kept-across-migrate')`);
    await client.end();

    const again = await runMigrate({ DATABASE_URL: url });
    expect(again.code, again.stderr).toBe(0);
    const after = await inspect();
    expect(after.applied).toBe(before.applied);
    expect(after.hashes).toEqual(before.hashes);
    expect(after.state).toEqual(before.state);

    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const kept = await check.query(
      `select count(*)::int as n from skills where name = 'kept-across-migrate'`,
    );
    await check.end();
    expect(kept.rows[0].n).toBe(1);
  }, 60_000);

  it('fails with a non-zero exit and a message when the database cannot be reached', async () => {
    const result = await runMigrate({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/migration failed/);
  }, 60_000);
});

describe('migrations on embedded PGlite', () => {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'skillreg-migrate-'));
  });
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the migrate script applies every migration once, and again is a no-op', async () => {
    const expected = await migrationCount();
    const first = await runMigrate({ SKILLREG_DATA_DIR: dataDir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`pglite:${dataDir}`);
    const second = await runMigrate({ SKILLREG_DATA_DIR: dataDir });
    expect(second.code, second.stderr).toBe(0);

    const client = await PGlite.create(dataDir);
    try {
      const applied = await client.query<{ n: number }>(
        'select count(*)::int as n from drizzle.__drizzle_migrations',
      );
      expect(applied.rows[0]!.n).toBe(expected);
      const tables = await client.query<{ table_name: string }>(
        `select table_name from information_schema.tables where table_schema = 'public'`,
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(expect.arrayContaining(TABLES));
    } finally {
      await client.close();
    }
  }, 120_000);
});
