import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Config, ConfigError, loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { withDatabase } from './global-setup.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestDatabase {
  /** postgres:// URL of this file's own database, or undefined for PGlite. */
  url?: string;
  open(): Promise<Database>;
  drop(): Promise<void>;
}

let pgliteSnapshot: Blob | undefined;

/** The migrated PGlite data directory global-setup.ts saved, read once per test file. */
function migratedPglite(): Blob {
  pgliteSnapshot ??= new Blob([readFileSync(inject('pgliteSnapshot'))]);
  return pgliteSnapshot;
}

/**
 * A database of this test file's own: a clone of the migrated template, or an in-memory PGlite
 * started from the migrated data directory (so the service's migrate() finds nothing left to do).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('postgresUrl');
  const template = inject('templateDatabase');
  if (!serverUrl) {
    return {
      open: () => openDatabase({ dataDir: 'memory://', loadDataDir: migratedPglite() }),
      drop: async () => {},
    };
  }
  const name = `skillreg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  return {
    url,
    open: () => openDatabase({ url, poolSize: 5 }),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await client.end();
    },
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
    SKILLREG_SEED_DIR: '',
    SKILLREG_DATA_DIR: '.data/test-unused',
    LOG_LEVEL: 'silent',
    // Tests stand behind a pretend proxy so they can vary client addresses and origins.
    SKILLREG_TRUST_PROXY: 'true',
    ...overrides,
  });
}

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  testDatabase: TestDatabase;
  close(): Promise<void>;
}

/** The problems loadConfig() reports for `env`, which it must refuse. */
export function configProblems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

/** An instance of the service on `database`: another replica, or the same registry configured otherwise. */
export function appOn(database: Database, env: Record<string, string> = {}): Promise<FastifyInstance> {
  return buildApp({ config: testConfig(env), database, logger: false });
}

/** The real service on this file's own database, driven through app.inject. */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const testDatabase = await createTestDatabase();
  const database = await testDatabase.open();
  let app: FastifyInstance;
  try {
    app = await appOn(database, env);
  } catch (error) {
    // A configuration the service refuses (a test may expect that) leaves no database behind.
    await database.close();
    await testDatabase.drop();
    throw error;
  }
  return {
    app,
    database,
    testDatabase,
    async close() {
      await app.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}

export const adminAuth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** PUT /views/{view} with `layers` (lowest precedence first), as the admin. */
export function putView(app: FastifyInstance, view: string, layers: string[]) {
  return app.inject({ method: 'PUT', url: `/views/${view}`, headers: adminAuth, payload: { layers } });
}
