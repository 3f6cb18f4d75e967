import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { isEntryPoint } from './entry-point.js';
import { DEFAULT_NAMESPACE } from './namespaces.js';

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
  const app = await buildApp({ config });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    // Give up after 10 s so an orchestrator's kill timeout is never reached with the process hung.
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, 10_000);
    timer.unref();
    // A keep-alive connection turns idle once its in-flight request is answered; close such connections
    // as they appear, or the server would wait out the keep-alive timeout (72 s) before it can stop.
    setInterval(() => app.server.closeIdleConnections(), 100).unref();
    try {
      await app.close();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // The search index is read before GET /readyz answers 200 (it answers 503 until then).
  const searchIndex = warmSearchIndex(app);
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: config.databaseUrl ? 'postgres' : `pglite:${config.dataDir}`, docs: '/docs' },
    'skill-registry ready',
  );
  // The agent catalogue copy behind /prompt and /tools is read once now (the longest read of a large
  // catalogue), not by the first agent to ask; later reads catch up by revision. After the search
  // index, whose strings for the skills' names the copy then holds rather than its own.
  void searchIndex
    .then(() => app.registry.agents.catalogues.mirror(DEFAULT_NAMESPACE).snapshot())
    .catch((error: unknown) => app.log.warn({ err: error }, 'could not read the agent catalogue yet'))
    .then(() => backfillArchives(app))
    .then(() => backfillPromptTokens(app))
    .then(() => backfillAttestations(app));
}

/**
 * Versions stored before the registry signed what it stores get their attestation in the background
 * (GET /skills/{name}/attestation signs one on demand meanwhile).
 */
export async function backfillAttestations(app: FastifyInstance): Promise<void> {
  try {
    const started = Date.now();
    const signed = await app.registry.signing.backfill();
    if (signed > 0) {
      app.log.info(
        { versions: signed, ms: Date.now() - started },
        'signed the versions stored before signing',
      );
    }
  } catch (error) {
    app.log.warn({ err: error }, 'could not sign older versions yet; their attestations are made on demand');
  }
}

/**
 * The search index is built now rather than by the first search (versions stored before their terms
 * were get them analysed and stored as it reads them).
 */
export async function warmSearchIndex(app: FastifyInstance): Promise<void> {
  try {
    const started = Date.now();
    await app.registry.search.warm();
    app.log.info({ ms: Date.now() - started }, 'search index ready');
  } catch (error) {
    app.log.warn({ err: error }, 'could not build the search index yet; the first search will');
  }
}

/**
 * Versions stored before prompt entry counts were stored at publish get them in the background, so
 * the next process renders /prompt without tokenizing them (this one has them remembered once used).
 */
export async function backfillPromptTokens(app: FastifyInstance): Promise<void> {
  try {
    const started = Date.now();
    const filled = await app.registry.fillPromptTokens();
    if (filled > 0) {
      app.log.info(
        { versions: filled, ms: Date.now() - started },
        'stored the prompt token counts of older versions',
      );
    }
  } catch (error) {
    app.log.warn(
      { err: error },
      'could not store the prompt token counts of older versions; renderings count them',
    );
  }
}

/**
 * Versions stored before archives were built at publish (an upgraded registry, a bulk import) get
 * theirs in the background once the service is up, in the same bounded batches the discovery index
 * uses, so the first index request does not wait for them. Another replica doing the same at the same
 * time costs duplicate work, never a wrong archive (they are deterministic and stored once).
 */
export async function backfillArchives(app: FastifyInstance): Promise<void> {
  try {
    const started = Date.now();
    const built = await app.registry.archives.backfill();
    if (built > 0) app.log.info({ built, ms: Date.now() - started }, 'built the archives of older versions');
  } catch (error) {
    app.log.warn({ err: error }, 'could not build the archives of older versions; the index builds them');
  }
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
