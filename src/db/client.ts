import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { DEFAULT_READ_MAX_LAG_MS, type ReadReplica, ReadRouter } from './read-routing.js';
import * as schema from './schema.js';

/** The drizzle handle both drivers share; repositories only ever see this type. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /**
   * The postgres:// URL (PostgreSQL only): the read cache opens one dedicated connection with it to
   * LISTEN for other replicas' writes. PGlite has no URL: every writer is in this process.
   */
  url?: string;
  /**
   * PostgreSQL with DATABASE_READ_URL: the streaming standby that serves reads (src/db/read-routing.ts).
   * The change feed tells it of other replicas' commits and reads the catalogue revision through it.
   */
  readReplica?: ReadReplica;
  /** Throws when the primary does not answer; used by /readyz (a down standby is bypassed, not fatal). */
  ping(): Promise<void>;
  /** Applies pending migrations under a cluster-wide advisory lock. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite is used. */
  url?: string;
  /** postgres:// URL of a streaming standby of `url` that serves reads (DATABASE_READ_URL). */
  readUrl?: string;
  /** How far the standby may trail the primary, in milliseconds, before reads bypass it. */
  readMaxLagMs?: number;
  /** PGlite data folder; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  /** Largest number of pooled PostgreSQL connections. */
  poolSize?: number;
  /**
   * PGlite only: a data directory saved by PGlite's dumpDataDir() to start from instead of an empty
   * cluster (the tests start every database from one migrated copy).
   */
  loadDataDir?: Blob;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Arbitrary but fixed key: every replica asks for the same lock, so only one runs migrations
 * while the others wait and then find nothing left to do.
 */
const MIGRATION_LOCK_KEY = 7_349_112_001;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.readUrl && !options.url) {
    throw new Error('a read replica (DATABASE_READ_URL) needs a PostgreSQL primary (DATABASE_URL)');
  }
  return options.url
    ? openPostgres(options.url, options.poolSize ?? 10, options.readUrl, options.readMaxLagMs)
    : openPglite(options.dataDir ?? 'memory://', options.loadDataDir);
}

/** The URL without its password, for logs. */
export function redactDatabaseUrl(url: string): string {
  if (!URL.canParse(url)) return '<unparseable URL>';
  const parsed = new URL(url);
  if (parsed.password) parsed.password = 'redacted';
  return parsed.toString();
}

/**
 * How long a new connection may take before the request fails (503). A stopped server refuses at
 * once (ECONNREFUSED); this bounds the case of a host that no longer answers at all.
 */
const CONNECT_TIMEOUT_MS = 5_000;
/** The standby's: a read waiting for it would rather go to the primary soon. */
const STANDBY_CONNECT_TIMEOUT_MS = 2_000;
/** /readyz: longest wait for `select 1` on a connection that is open but may be dead. */
const PING_TIMEOUT_MS = 2_000;
/** pg reads a per-query `query_timeout` (lib/client.js), which @types/pg does not declare. */
const PING_QUERY = { text: 'select 1', query_timeout: PING_TIMEOUT_MS };

function openPool(url: string, poolSize: number, connectTimeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    // TCP keepalive notices a peer that vanished without closing the connection (host or network gone).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A client that loses its server emits 'error'; without a listener that would crash the process.
  // The pool listens on idle clients, releaseDeadClients on checked-out ones, this on the rest.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

async function openPostgres(
  url: string,
  poolSize: number,
  readUrl?: string,
  readMaxLagMs = DEFAULT_READ_MAX_LAG_MS,
): Promise<Database> {
  const pool = openPool(url, poolSize, CONNECT_TIMEOUT_MS);
  const standby = readUrl ? openPool(readUrl, poolSize, STANDBY_CONNECT_TIMEOUT_MS) : undefined;
  if (standby) releaseDeadClients(standby);
  const router = standby && new ReadRouter(pool, standby, { maxLagMs: readMaxLagMs });
  releaseDeadClients(pool, router && ((client) => router.released(client)));
  await router?.start();
  const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    url,
    ...(router ? { readReplica: router } : {}),
    async ping() {
      const client = await pool.connect();
      try {
        await client.query(PING_QUERY);
        client.release();
      } catch (error) {
        // Destroy rather than reuse a connection that did not answer.
        client.release(true);
        throw error;
      }
    },
    async migrate() {
      // Session-level advisory locks belong to one connection, so migrations get a dedicated client.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        try {
          await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        }
      } finally {
        await client.end();
        // Committed on a connection of its own: later reads must see the migrated schema.
        router?.sawCommit();
      }
    },
    async close() {
      router?.close();
      await Promise.all([pool.end(), standby?.end()]);
    },
  };
}

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: Error | boolean) => void,
) => void;

/**
 * Makes every checkout from `pool` survive the server going away while the client is checked out:
 * the client goes back to the pool (which discards it) as soon as its connection fails, and a later
 * release by its holder is ignored. Without this a checked-out client whose connection dies crashes
 * the process (an 'error' event nobody listens to), and one whose BEGIN fails leaks: drizzle's
 * transaction() sends BEGIN before its try/finally, so nothing releases it. A few outages later the
 * pool would be exhausted for good and the service would never recover. `onRelease` runs after
 * each release (the read router learns of writes there, before the caller goes on).
 */
function releaseDeadClients(pool: pg.Pool, onRelease?: (client: pg.PoolClient) => void): void {
  const connect = pool.connect.bind(pool) as (
    callback?: ConnectCallback,
  ) => Promise<pg.PoolClient> | undefined;
  const guard = (client: pg.PoolClient): pg.PoolClient => {
    const release = client.release.bind(client);
    let released = false;
    const onError = (error: Error) => client.release(error);
    client.release = (error?: Error | boolean) => {
      if (released) return;
      released = true;
      client.removeListener('error', onError);
      release(error);
      onRelease?.(client);
    };
    client.on('error', onError);
    return client;
  };
  // An own property shadows Pool.prototype.connect, which pool.query() also goes through.
  Object.assign(pool, {
    connect: (callback?: ConnectCallback) =>
      callback
        ? connect((error, client) => {
            const guarded = client && guard(client);
            callback(error, guarded, (release) => guarded?.release(release));
          })
        : connect()!.then(guard),
  });
}

const BYTEA_OID = 17;

/**
 * bytea for PGlite, which passes every value as text unless told otherwise. A parameter goes as the bytes
 * themselves (PGlite's bind sends an ArrayBuffer view in binary format), so no hex string is built, measured
 * and parsed again; a value read comes back as hex text, decoded by Node's native codec rather than
 * PGlite's byte-at-a-time conversion.
 */
function byteaParameter(value: unknown): string {
  if (!(value instanceof Uint8Array)) throw new TypeError('a bytea parameter must be a Uint8Array');
  // PGlite's serializer type says string; its bind writes a view as a binary parameter.
  return value as unknown as string;
}

function byteaOfText(text: string): Uint8Array {
  const hex = text.startsWith('\\x') ? text.slice(2) : text;
  // A buffer of its own rather than a slice of Node's shared pool: cached bytes keep nothing else alive.
  const bytes = Buffer.allocUnsafeSlow(hex.length >>> 1);
  bytes.write(hex, 'hex');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<Database> {
  // Taken before PGlite reads a page: a second process on the same folder must stop here (see
  // data-dir-lock.ts). An in-memory database belongs to its process alone.
  const lock: DataDirLock | undefined = dataDir.startsWith('memory://')
    ? undefined
    : await lockDataDir(dataDir);
  let client: PGlite;
  try {
    client = await PGlite.create(dataDir, {
      extensions: { pg_trgm },
      serializers: { [BYTEA_OID]: byteaParameter },
      parsers: { [BYTEA_OID]: byteaOfText },
      ...(loadDataDir ? { loadDataDir } : {}),
    });
  } catch (error) {
    await lock?.release();
    throw error;
  }
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    async ping() {
      await client.query('select 1');
    },
    async migrate() {
      await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
      try {
        await migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
      }
    },
    async close() {
      try {
        await client.close();
      } finally {
        await lock?.release();
      }
    },
  };
}
