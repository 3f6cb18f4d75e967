import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { isEntryPoint } from '../process/entry-point.js';

/**
 * Applies pending migrations (`npm run db:migrate`, `skillreg migrate`). Safe to run from many replicas
 * or jobs at once: migrations run under a PostgreSQL advisory lock, so one applies them and the rest
 * find nothing to do.
 */
export async function runMigrations(
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<void> {
  const config = loadConfig(env);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
  log(`migrations applied (${config.databaseUrl ? 'postgres' : `pglite:${config.dataDir}`})`);
}

const isMain = isEntryPoint(import.meta.url);
if (isMain) {
  runMigrations().catch((error) => {
    process.stderr.write(
      error instanceof ConfigError
        ? `${error.message}\n`
        : `migration failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
