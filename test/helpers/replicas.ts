import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/client.js';
import { createTestDatabase, type TestDatabase, testConfig } from './context.js';
import { until } from './polling.js';

export interface Replicas {
  apps: FastifyInstance[];
  databases: Database[];
  testDatabase: TestDatabase;
  close(): Promise<void>;
}

/**
 * `count` replicas of the service on one PostgreSQL database of their own, each with its own
 * connections (so they learn of each other's writes only through LISTEN/NOTIFY), resolved once every
 * replica's change feed is live.
 */
export async function startReplicas(
  count = 2,
  /** Every replica's environment, or each one's (by index). */
  env: Record<string, string> | Record<string, string>[] = {},
  liveWithinMs = 5_000,
): Promise<Replicas> {
  const testDatabase = await createTestDatabase();
  const databases: Database[] = [];
  const apps: FastifyInstance[] = [];
  const close = async () => {
    for (const app of apps) await app.close();
    for (const database of databases) await database.close();
    await testDatabase.drop();
  };
  try {
    for (let i = 0; i < count; i++) {
      const database = await testDatabase.open();
      databases.push(database);
      const own = Array.isArray(env) ? (env[i] ?? {}) : env;
      apps.push(await buildApp({ config: testConfig(own), database, logger: false }));
    }
    await until(() => apps.every((app) => app.registry.cache.state.live), liveWithinMs);
  } catch (error) {
    await close();
    throw error;
  }
  return { apps, databases, testDatabase, close };
}
