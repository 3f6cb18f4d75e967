import { afterAll, beforeAll } from 'vitest';
import type { BundleFile } from '../../src/bundle/types.js';
import type { Database } from '../../src/db/client.js';
import { DEFAULT_NAMESPACE, type Scope } from '../../src/domain/scope.js';
import { openRegistry, type Registry } from '../../src/services/registry.js';
import type { PublishResult } from '../../src/services/skill-writes.js';
import { createTestDatabase, type TestDatabase, testConfig } from './context.js';

/**
 * The registry's services on a database of the test file's own, built by the composition root
 * (openRegistry) as the app builds them, with no app, HTTP or routes: for tests of a rule where it
 * lives (src/services). The database is a clone of the migrated template on PostgreSQL, a fresh
 * in-memory PGlite otherwise (createTestDatabase).
 *
 *   let ctx: TestRegistry;
 *   beforeAll(async () => { ctx = await openTestRegistry(); });
 *   afterAll(() => ctx?.close());
 */
export interface TestRegistry {
  registry: Registry;
  database: Database;
  testDatabase: TestDatabase;
  /**
   * Another registry on the same database configured by `env` (another replica, or the same one
   * restarted with other settings), closed with this one.
   */
  registryOn(env?: Record<string, string>): Promise<Registry>;
  /** Closes every registry opened here, then the database, and drops it. */
  close(): Promise<void>;
}

/** The actor tests write as (what the admin token's writes record). */
export const TEST_ACTOR = 'admin-token';

export async function openTestRegistry(env: Record<string, string> = {}): Promise<TestRegistry> {
  const testDatabase = await createTestDatabase();
  const database = await testDatabase.open();
  const opened: Registry[] = [];
  const registryOn = async (more: Record<string, string> = {}) => {
    const registry = await openRegistry({ config: testConfig(more), database });
    opened.push(registry);
    return registry;
  };
  try {
    // What buildApp does before openRegistry (a no-op on a clone of the migrated template).
    await database.migrate();
    const registry = await registryOn(env);
    return {
      registry,
      database,
      testDatabase,
      registryOn,
      async close() {
        for (const one of opened.reverse()) await one.close();
        await database.close();
        await testDatabase.drop();
      },
    };
  } catch (error) {
    for (const one of opened) await one.close().catch(() => {});
    await database.close();
    await testDatabase.drop();
    throw error;
  }
}

/** Publishes files as POST /skills hands them to the service (a multipart upload), as TEST_ACTOR. */
export function publishFiles(
  registry: Registry,
  bundle: BundleFile[],
  options: { namespace?: string; version?: string; tag?: string; name?: string; actor?: string } = {},
): Promise<PublishResult> {
  return registry.writes.publishUpload(
    { kind: 'files', files: bundle },
    {
      namespace: options.namespace,
      version: options.version,
      tag: options.tag,
      nameOverride: options.name,
      actor: options.actor ?? TEST_ACTOR,
    },
  );
}

/** The scope of one namespace (default `default`), as the unprefixed or /namespaces/{ns}/ routes read. */
export function namespaceScope(namespace: string = DEFAULT_NAMESPACE): Scope {
  return { kind: 'namespace', namespace };
}

/** What `promise` was rejected with; fails the test when it resolved. */
export async function refusal(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a refusal, but it succeeded');
}

/**
 * This test file's registry: opened before its tests, closed after them. The fields are read when a
 * test runs (they exist from beforeAll on).
 */
export function registryPerFile(env: Record<string, string> = {}): TestRegistry {
  let opened: TestRegistry | undefined;
  beforeAll(async () => {
    opened = await openTestRegistry(env);
  });
  afterAll(async () => opened?.close());
  const current = (): TestRegistry => {
    if (!opened) throw new Error("the file's registry opens in beforeAll: use it inside a test or hook");
    return opened;
  };
  return {
    get registry() {
      return current().registry;
    },
    get database() {
      return current().database;
    },
    get testDatabase() {
      return current().testDatabase;
    },
    registryOn: (options) => current().registryOn(options),
    close: () => current().close(),
  };
}
