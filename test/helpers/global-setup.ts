import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the PostgreSQL server the tests use, or '' for embedded PGlite. */
    postgresUrl: string;
    /** A migrated database each test file clones (CREATE DATABASE ... TEMPLATE). */
    templateDatabase: string;
    /**
     * PGlite only: a file holding a migrated PGlite data directory (dumpDataDir), which every embedded
     * test database starts from instead of creating a cluster and migrating it again.
     */
    pgliteSnapshot: string;
  }
}

async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Picks the test database once per run: TEST_DATABASE_URL when set, else a Testcontainers
 * PostgreSQL when a Docker engine answers, else embedded PGlite (each test file its own).
 */
/**
 * Compiles src/ into dist/ once for the run, as `npm start`'s prestart does (bin/build-if-stale.js: a
 * no-op when dist/ is fresh). The suites that run the compiled server or lay out the image then find it
 * built instead of each compiling it again; a failure is theirs to report, with tsc's output.
 */
function buildDist(): Promise<void> {
  const script = fileURLToPath(new URL('../../bin/build-if-stale.js', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: 'ignore' });
  return new Promise((resolve) => {
    child.on('close', () => resolve());
    child.on('error', () => resolve());
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const built = buildDist();
  try {
    return await setUpDatabases(project);
  } finally {
    await built;
  }
}

async function setUpDatabases(project: TestProject): Promise<() => Promise<void>> {
  let url = process.env.TEST_DATABASE_URL ?? '';
  let stopContainer: (() => Promise<unknown>) | undefined;
  if (!url && process.env.SKILLREG_TEST_NO_DOCKER !== '1' && (await dockerAnswers())) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    url = container.getConnectionUri();
    stopContainer = () => container.stop();
  }
  project.provide('postgresUrl', url);
  project.provide('templateDatabase', '');
  project.provide('pgliteSnapshot', '');
  if (!url) {
    const snapshot = await migratedPgliteSnapshot();
    project.provide('pgliteSnapshot', snapshot);
    console.log('[tests] database: embedded PGlite (set TEST_DATABASE_URL to use PostgreSQL)');
    return async () => {
      await rm(snapshot, { force: true });
    };
  }
  const template = `skillreg_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const database = await openDatabase({ url: withDatabase(url, template), poolSize: 1 });
  await database.migrate();
  await database.close();
  project.provide('templateDatabase', template);
  console.log(`[tests] database: PostgreSQL ${redact(url)}, template ${template}`);
  return async () => {
    await admin.query(`drop database if exists ${template} with (force)`).catch(() => {});
    await admin.end();
    await stopContainer?.();
  };
}

/**
 * Migrates one in-memory PGlite and saves its data directory (an uncompressed tar) to a file. Every test
 * database untars it, so it is kept small: a WAL segment of 1 MB rather than 16 (initdb's --wal-segsize)
 * and no template databases (the embedded engine never creates a database), which makes each file's
 * database start a third cheaper.
 */
async function migratedPgliteSnapshot(): Promise<string> {
  const cluster = await PGlite.create('memory://', { initDbStartParams: ['--wal-segsize=1'] });
  let bare: Blob;
  try {
    await cluster.query(`update pg_database set datistemplate = false where datname like 'template%'`);
    await cluster.query('drop database template0');
    await cluster.query('drop database template1');
    bare = await cluster.dumpDataDir('none');
  } finally {
    await cluster.close();
  }
  const database = await openDatabase({ dataDir: 'memory://', loadDataDir: bare });
  try {
    await database.migrate();
    // drizzle's PGlite driver keeps the client it was given as $client.
    const client = (database.db as unknown as { $client: PGlite }).$client;
    await client.query('checkpoint');
    const dump = await client.dumpDataDir('none');
    const file = path.join(tmpdir(), `skillreg-test-pglite-${process.pid}.tar`);
    await writeFile(file, Buffer.from(await dump.arrayBuffer()));
    return file;
  } finally {
    await database.close();
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
