// First, before any other module runs: see the module's comment.
import './process/tick-shapes.js';
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { redactDatabaseUrl } from './db/client.js';
import { type DataDirLock, DataDirLockedError, describeHolder, lockDataDir } from './db/data-dir-lock.js';
import { isEntryPoint } from './process/entry-point.js';
import { checkPortFree, describeListenError, ListenError } from './process/port-check.js';
import { handleStops, startedByNpm } from './process/stop.js';

/**
 * V8 grows the heap by a factor of up to 4 between full collections when it judges collection costly,
 * and on a machine with gigabytes free a busy replica then holds hundreds of megabytes of garbage: at
 * a large catalogue under a read soak RSS swung to several times the live heap (docs/PERFORMANCE.md).
 * A fixed factor of 1.15 collects sooner. Settable at run time, unlike
 * --max-old-space-size; an operator's own flag (NODE_OPTIONS or the command line) wins.
 */
export const HEAP_GROWING_PERCENT = 15;

function tuneHeap(env: Record<string, string | undefined>): void {
  const flags = `${env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`;
  if (!/--heap[-_]growing[-_]percent/.test(flags)) {
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
}

/** How long a stop may drain in-flight requests before the process exits anyway. */
export const DRAIN_MS = 10_000;

/** Prints one line and exits non-zero: start-up problems a person fixes by changing a setting. */
function refuseToStart(line: string): never {
  process.stderr.write(`skill-registry: ${line}\n`);
  process.exit(1);
}

/** Starts the service: `npm start`, `skillreg serve` and the container all come here. */
export async function startServer(env: Record<string, string | undefined> = process.env): Promise<void> {
  tuneHeap(env);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // Before anything is migrated, seeded or served: the embedded database's folder (one process at a
  // time), then the port, so a second `npm start` names the process it would have collided with.
  let dataDirLock: DataDirLock | undefined;
  if (!config.databaseUrl) {
    try {
      dataDirLock = await lockDataDir(config.dataDir, {
        onWait: (holder, staleInMs) =>
          process.stderr.write(
            `skill-registry: ${config.dataDir} is locked by ${describeHolder(holder)}; waiting up to ${Math.ceil(staleInMs / 1000)} s to see whether it is still running\n`,
          ),
      });
    } catch (error) {
      if (error instanceof DataDirLockedError) refuseToStart(error.message);
      throw error;
    }
  }
  try {
    await checkPortFree(config.host, config.port);
  } catch (error) {
    await dataDirLock?.release();
    if (error instanceof ListenError) refuseToStart(error.message);
    throw error;
  }
  const app = await buildApp({ config });
  handleStops({
    drainMs: DRAIN_MS,
    log: app.log,
    watchParent: startedByNpm(env),
    async stop() {
      // A keep-alive connection turns idle once its in-flight request is answered; close such
      // connections as they appear, or the server would wait out the keep-alive timeout first.
      setInterval(() => app.server.closeIdleConnections(), 100).unref();
      try {
        await app.close();
      } catch (error) {
        app.log.error({ err: error }, 'error during shutdown');
        throw error;
      } finally {
        await dataDirLock?.release();
      }
    },
  });
  // What every replica keeps in memory is read before GET /readyz answers 200 (503 until then).
  const warm = warmCaches(app);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const line = describeListenError(error, config.host, config.port);
    if (!line) throw error;
    await app.close().catch(() => {});
    await dataDirLock?.release();
    refuseToStart(line);
  }
  await announce(app, config);
  void warm
    .then(() => backfillArchives(app))
    .then(() => backfillPromptTokens(app))
    .then(() => backfillAttestations(app))
    .then(() => backfillInstalledVersions(app));
}

/** The address a person opens: the public URL when set, else where the service listens. */
export function baseUrlOf(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, port: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The start-up lines a person reads: where the console and the docs are, and, when nobody can write,
 * why and what to set.
 */
async function announce(app: FastifyInstance, config: Config): Promise<void> {
  const address = app.server.address();
  const base = baseUrlOf(config, typeof address === 'object' && address ? address.port : config.port);
  app.log.info(
    {
      database: config.databaseUrl ? 'postgres' : `pglite:${config.dataDir}`,
      url: base,
      console: `${base}/ui`,
      docs: `${base}/docs`,
    },
    `skill-registry ready at ${base}: console ${base}/ui, API docs ${base}/docs`,
  );
  announceReadReplica(app, config);
  if (config.adminToken) return;
  const writers = await app.registry.tokens.writers().catch(() => []);
  if (writers.length > 0) return;
  app.log.warn(
    'no SKILLREG_ADMIN_TOKEN is set and no token may publish: the registry is read-only to everyone. ' +
      'Set SKILLREG_ADMIN_TOKEN to a secret of 16 characters or more (openssl rand -hex 32) and restart, ' +
      'then create publish tokens with it',
  );
}

/** The standby of DATABASE_READ_URL: that it is in use, and whenever it stops or starts serving reads. */
function announceReadReplica(app: FastifyInstance, config: Config): void {
  const replica = app.registry.database.readReplica;
  if (!config.databaseReadUrl || !replica) return;
  const url = redactDatabaseUrl(config.databaseReadUrl);
  app.log.info({ readReplica: url }, `read replica in use: ${url}`);
  const { standbyUp, standbyProblem } = replica.stats();
  if (!standbyUp) {
    app.log.warn(
      { readReplica: url, problem: standbyProblem },
      `read replica: not serving reads yet (${standbyProblem}); reads go to the primary until it does`,
    );
  }
  replica.onAvailability((up, error) => {
    if (up) app.log.info({ readReplica: url }, 'read replica: the standby serves reads again');
    else
      app.log.warn(
        { readReplica: url, err: error },
        'read replica: the standby is unavailable; reads go to the primary',
      );
  });
}

/**
 * A start-up backfill: runs in the background once the service is up, logs what it did, and only warns
 * when it fails (the reads that need what it fills compute it on demand meanwhile).
 */
async function backfill(
  app: FastifyInstance,
  run: () => Promise<number>,
  messages: { done: string; failed: string; key: 'versions' | 'built' },
): Promise<void> {
  try {
    const started = Date.now();
    const count = await run();
    if (count > 0) app.log.info({ [messages.key]: count, ms: Date.now() - started }, messages.done);
  } catch (error) {
    app.log.warn({ err: error }, messages.failed);
  }
}

/**
 * Versions stored before the registry signed what it stores get their attestation in the background
 * (GET /skills/{name}/attestation signs one on demand meanwhile).
 */
export function backfillAttestations(app: FastifyInstance): Promise<void> {
  return backfill(app, () => app.registry.startupChecks.attestations(), {
    done: 'signed the versions stored before signing',
    failed: 'could not sign older versions yet; their attestations are made on demand',
    key: 'versions',
  });
}

/** The computedHash and git ids of versions stored before they were computed at publish. */
export function backfillInstalledVersions(app: FastifyInstance): Promise<void> {
  return backfill(app, () => app.registry.startupChecks.installedIdentities(), {
    done: 'computed the installed identity (computedHash, git commit) of versions stored before it was',
    failed: 'could not compute the installed identity of older versions yet; it is computed on demand',
    key: 'versions',
  });
}

/**
 * The search index and the agent catalogue copy are read now rather than by the first search or
 * prompt (versions stored before their terms were get them analysed and stored as the index reads them).
 */
export function warmCaches(app: FastifyInstance): Promise<void> {
  return app.registry.warm((part, { ms, error }) => {
    if (error === undefined) app.log.info({ ms }, `${part} ready`);
    else
      app.log.warn(
        { err: error, ms },
        `could not prepare the ${part} yet; the first request that needs it will`,
      );
  });
}

/**
 * Versions stored before prompt entry counts were stored at publish get them in the background, so
 * the next process renders /prompt without tokenizing them (this one has them remembered once used).
 */
export function backfillPromptTokens(app: FastifyInstance): Promise<void> {
  return backfill(app, () => app.registry.startupChecks.promptTokens(), {
    done: 'stored the prompt token counts of older versions',
    failed: 'could not store the prompt token counts of older versions; renderings count them',
    key: 'versions',
  });
}

/**
 * Versions stored before archives were built at publish (an upgraded registry, a bulk import) get
 * theirs in the background once the service is up, in the same bounded batches the discovery index
 * uses, so the first index request does not wait for them. Another replica doing the same at the same
 * time costs duplicate work, never a wrong archive (they are deterministic and stored once).
 */
export function backfillArchives(app: FastifyInstance): Promise<void> {
  return backfill(app, () => app.registry.startupChecks.archives(), {
    done: 'built the archives of older versions',
    failed: 'could not build the archives of older versions; the index builds them',
    key: 'built',
  });
}

const isMain = isEntryPoint(import.meta.url);
if (isMain) {
  startServer().catch((error) => {
    process.stderr.write(
      `skill-registry failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
