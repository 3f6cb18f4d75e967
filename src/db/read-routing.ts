import { AsyncLocalStorage } from 'node:async_hooks';
import { getTableName } from 'drizzle-orm';
import type pg from 'pg';
import { tokens, trustedPublishers } from './schema.js';

/**
 * Reads on a PostgreSQL streaming standby (DATABASE_READ_URL), writes and whatever must see them on
 * the primary.
 *
 * drizzle runs a plain statement with `pool.query()` and a transaction on `pool.connect()`. The
 * primary pool's `query` is replaced by `route`: a plain read goes to the standby when the standby is
 * up and has replayed everything this process must see; anything else, and every transaction, advisory
 * lock and LISTEN (all on `connect()`), stays on the primary.
 *
 * What this process must see is a WAL position, `required`. It rises after each of the process's own
 * writes (a released primary connection that ran a write), after every commit the change feed announces
 * from another replica, and after every read of the catalogue revision (`onPrimary`). Each time, the
 * primary's current position is read; until it is known, and until the standby has replayed it, reads
 * go to the primary. A notification or a commit arrives before the position is read, so the position
 * covers the commit: the visibility rule of the replicas holds however far the standby lags. A read the
 * primary serves for the standby is followed by the primary's position, which `required` takes too: a
 * process never reads older than it already has.
 *
 * Writes nobody announces (a token's last use, an audit entry) reach other replicas' reads within the
 * lag bound: a standby whose replay trails the primary's position of `maxLagMs` ago is bypassed, and
 * used again once it has caught up. Reads that authorize (tokens, trusted publishers) never use it: a
 * revoked token stops working on every replica at once.
 */

/** Default of DATABASE_READ_MAX_LAG_MS: the visibility rule's second, for writes no replica announces. */
export const DEFAULT_READ_MAX_LAG_MS = 1_000;

/** Why a read went to the primary. */
export const PRIMARY_REASONS = ['pinned', 'fence', 'behind', 'down', 'failed'] as const;
export type PrimaryReason = (typeof PRIMARY_REASONS)[number];

export interface ReadRoutingStats {
  /** Plain reads answered by the standby. */
  standbyReads: number;
  /**
   * Plain reads answered by the primary, by why: `pinned` (authorization or revision reads), `fence`
   * (a write's position not known yet), `behind` (not replayed on the standby yet, or past the lag
   * bound), `down` (standby unavailable), `failed` (the standby failed it; run again on the primary).
   */
  primaryReads: Record<PrimaryReason, number>;
  /** Primary connections given back after a write: transactions and plain statements that wrote. */
  writes: number;
  standbyUp: boolean;
  /** Why the standby does not serve, when it does not. */
  standbyProblem?: string;
  /** WAL bytes between the primary's last known position and the standby's replay (0 when current). */
  lagBytes: number;
}

export interface ReadReplica {
  /**
   * A commit this process must see from now on, already made: another replica's (the change feed
   * delivered its notification) or this process's own outside the pool (migrations).
   */
  sawCommit(): void;
  /** Runs `read` with every statement on the primary; later reads see at least what it saw. */
  onPrimary<T>(read: () => Promise<T>): Promise<T>;
  /** Calls `listener` when the standby starts or stops serving reads (the service logs it). */
  onAvailability(listener: (up: boolean, error?: unknown) => void): void;
  stats(): ReadRoutingStats;
}

export interface ReadRoutingOptions {
  /** Longest time the standby may trail the primary before reads bypass it. */
  maxLagMs: number;
  /** How often the standby's replay position is read while it serves, and while it does not. */
  pollMs?: number;
  downPollMs?: number;
  /** How often the primary's position is sampled for the lag bound. */
  sampleMs?: number;
}

type QueryFn = (config: unknown, values?: unknown) => Promise<pg.QueryResult>;

const READ_START = /^\s*\(?\s*(?:select|with)\b/i;
/** Words of statements that write or take an xid: never on the standby, and a fence after them. */
const WRITE_WORDS =
  /\b(?:insert|update|delete|merge|truncate|nextval|setval|pg_notify|txid_current|pg_current_xact_id)\b/i;
/**
 * Reads that must stay on the primary: locks and settings (they would hold on the wrong server), the
 * primary's own position, and authorization.
 */
const PRIMARY_ONLY = new RegExp(
  String.raw`\b(?:pg_advisory\w*|pg_try_advisory\w*|set_config|pg_current_wal\w*)\b|"(?:${getTableName(tokens)}|${getTableName(trustedPublishers)})"`,
  'i',
);
const TRANSACTION_CONTROL =
  /^\s*(?:begin|start\s+transaction|commit|end|rollback|abort|savepoint|release)\b/i;

/** Whether a statement may write (read-only statements and transaction control do not). */
export function mayWrite(text: string): boolean {
  if (READ_START.test(text)) return WRITE_WORDS.test(text);
  return !TRANSACTION_CONTROL.test(text);
}

function servableByStandby(text: string): boolean {
  return READ_START.test(text) && !WRITE_WORDS.test(text) && !PRIMARY_ONLY.test(text);
}

/** `X/Y` (pg_lsn as text) as a number of bytes. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** WAL page size; a position just past a page header means nothing was inserted after the boundary. */
const WAL_PAGE = 8192n;
const LONG_PAGE_HEADER = 40n;

/**
 * The position a reader must have replayed to see every commit made so far. The insert position
 * covers commits not yet flushed (synchronous_commit off); but when the last record ended on a page
 * boundary it points past the next page's header, which a standby reaches only with the next record.
 */
function positionToSee(written: bigint, inserted: bigint): bigint {
  return inserted - written <= LONG_PAGE_HEADER && written % WAL_PAGE === 0n ? written : inserted;
}

const POSITION =
  'select pg_current_wal_lsn()::text as written, pg_current_wal_insert_lsn()::text as inserted';
interface PositionRow {
  written: string;
  inserted: string;
}

function positionOf(row: PositionRow): bigint {
  return positionToSee(parseLsn(row.written), parseLsn(row.inserted));
}

/**
 * A standby error that means the server is gone or refusing (a Node socket error, pg's "Connection
 * terminated", SQLSTATE classes 08, 53 and 57P), as opposed to one about the statement.
 */
function serverUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return /^(?:08|53|57P)/.test(code);
}

const POLL_TIMEOUT_MS = 1_000;
/** Least time between two reads of the standby's position asked for by reads waiting on it. */
const ON_DEMAND_POLL_MS = 5;
const WROTE = Symbol('wrote');
type Tracked = pg.PoolClient & { [WROTE]?: boolean };

export class ReadRouter implements ReadReplica {
  private readonly pinned = new AsyncLocalStorage<boolean>();
  private readonly primaryQuery: QueryFn;
  private readonly options: Required<ReadRoutingOptions>;
  private up = false;
  private problem: string | undefined;
  private replayed = -1n;
  /** The highest position this process must see, and the primary's position `maxLagMs` ago. */
  private required = 0n;
  private floor = 0n;
  private latest = 0n;
  /** Fences raised, and the last one whose position is known. */
  private fences = 0;
  private covered = 0;
  private fetching = false;
  private polling: Promise<void> | undefined;
  private polledAt = 0;
  private sampledAt = 0;
  private readonly samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners: ((up: boolean, error?: unknown) => void)[] = [];
  private readonly counts = {
    standby: 0,
    writes: 0,
    primary: Object.fromEntries(PRIMARY_REASONS.map((reason) => [reason, 0])) as Record<
      PrimaryReason,
      number
    >,
  };

  constructor(
    private readonly primary: pg.Pool,
    private readonly standby: pg.Pool,
    options: ReadRoutingOptions,
  ) {
    this.options = { pollMs: 100, downPollMs: 500, sampleMs: 250, ...options };
    const query = primary.query.bind(primary) as unknown as QueryFn;
    this.primaryQuery = query;
    // pg-pool's own code never calls this.query, so only callers (drizzle) see the router.
    Object.assign(primary, {
      query: (...args: unknown[]) =>
        args.some((arg) => typeof arg === 'function')
          ? (query as (...all: unknown[]) => unknown)(...args)
          : this.route(args[0], args[1]),
    });
    primary.on('connect', (client) => this.track(client as Tracked));
  }

  /** Reads the standby's position once, so the first requests may use it; a down standby is no error. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  sawCommit(): void {
    this.fences += 1;
    this.fetchRequired();
  }

  async onPrimary<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await this.pinned.run(true, read);
    } finally {
      this.sawCommit();
    }
  }

  onAvailability(listener: (up: boolean, error?: unknown) => void): void {
    this.listeners.push(listener);
  }

  stats(): ReadRoutingStats {
    const lag = this.latest - this.replayed;
    return {
      standbyReads: this.counts.standby,
      primaryReads: { ...this.counts.primary },
      writes: this.counts.writes,
      standbyUp: this.up,
      ...(this.up || !this.problem ? {} : { standbyProblem: this.problem }),
      lagBytes: this.replayed < 0n || lag < 0n ? 0 : Number(lag),
    };
  }

  /** Called by the primary pool when a client goes back: a client that wrote raises a fence. */
  released(client: pg.PoolClient): void {
    const tracked = client as Tracked;
    if (!tracked[WROTE]) return;
    tracked[WROTE] = false;
    this.counts.writes += 1;
    this.sawCommit();
  }

  private track(client: Tracked): void {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const config = args[0];
        const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
        if (typeof text === 'string' && mayWrite(text)) client[WROTE] = true;
        return query(...args);
      },
    });
  }

  private route(config: unknown, values: unknown): Promise<pg.QueryResult> {
    const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '');
    if (!servableByStandby(text)) {
      if (!mayWrite(text)) this.counts.primary.pinned += 1;
      return this.primaryQuery(config, values);
    }
    const reason = this.reasonForPrimary();
    if (!reason) return this.onStandby(config, values);
    this.counts.primary[reason] += 1;
    // Pinned reads see nothing the standby serves; a down standby is caught up before it serves again.
    if (reason === 'pinned' || reason === 'down') return this.primaryQuery(config, values);
    return this.readPrimary(config, values);
  }

  /**
   * A read the standby could serve but is not current enough for, on the primary, followed on the same
   * connection by the primary's position: later standby reads wait for it, so a process never reads
   * older than it already has (a commit not announced yet, seen here, then missed there).
   */
  private async readPrimary(config: unknown, values: unknown): Promise<pg.QueryResult> {
    const client = await this.primary.connect();
    try {
      const result = await client.query(config as pg.QueryConfig, values as unknown[]);
      const { rows } = await client.query<PositionRow>(POSITION);
      this.raise(positionOf(rows[0]!));
      client.release();
      return result;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  private raise(position: bigint): void {
    if (position > this.required) this.required = position;
    if (position > this.latest) this.latest = position;
  }

  private reasonForPrimary(): PrimaryReason | undefined {
    if (this.pinned.getStore()) return 'pinned';
    if (!this.up) return 'down';
    if (this.covered < this.fences) return 'fence';
    if (this.replayed < this.required || this.replayed < this.floor) {
      // Read the position again now rather than at the next poll, though not for every read.
      if (performance.now() - this.polledAt >= ON_DEMAND_POLL_MS) void this.refresh();
      return 'behind';
    }
    return undefined;
  }

  private async onStandby(config: unknown, values: unknown): Promise<pg.QueryResult> {
    try {
      const result = await this.standby.query(config as pg.QueryConfig, values as unknown[]);
      this.counts.standby += 1;
      return result;
    } catch (error) {
      // Whatever failed there runs again on the primary: a statement at fault fails there too, with
      // the primary's error; a recovery conflict or a lost standby does not fail the request.
      this.counts.primary.failed += 1;
      if (serverUnavailable(error)) this.setUp(false, error);
      const result = await this.readPrimary(config, values);
      // Refused as a write (read_only_sql_transaction): it wrote on the primary, so later reads see it.
      if ((error as { code?: unknown }).code === '25006') this.sawCommit();
      return result;
    }
  }

  private setUp(up: boolean, error?: unknown): void {
    if (!up) this.problem = error instanceof Error ? error.message : String(error ?? 'unknown');
    if (this.up === up) return;
    this.up = up;
    // Reads went to the primary meanwhile: the standby serves once it has what they saw.
    if (up) this.sawCommit();
    for (const listener of this.listeners) listener(up, error);
  }

  private schedule(): void {
    if (this.closed) return;
    const delay = this.up ? this.options.pollMs : this.options.downPollMs;
    this.timer = setTimeout(() => void this.tick(), delay).unref();
  }

  private async tick(): Promise<void> {
    await Promise.all([this.refresh(), this.sample()]);
    // A position that could not be read (the primary did not answer) is asked for again.
    if (this.covered < this.fences) this.fetchRequired();
    this.schedule();
  }

  /** Reads the standby's replay position; concurrent callers share one query. */
  private refresh(): Promise<void> {
    this.polling ??= this.poll().finally(() => {
      this.polling = undefined;
      this.polledAt = performance.now();
    });
    return this.polling;
  }

  private async poll(): Promise<void> {
    try {
      const { rows } = await this.standby.query<{ recovering: boolean; lsn: string | null }>({
        text: 'select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as lsn',
        query_timeout: POLL_TIMEOUT_MS,
      } as pg.QueryConfig);
      const row = rows[0];
      // A promoted standby is another primary now, no longer replaying this one's writes.
      if (!row?.recovering || !row.lsn) {
        this.setUp(false, new Error('the read replica is not a standby in recovery'));
        return;
      }
      this.replayed = parseLsn(row.lsn);
      this.setUp(true);
    } catch (error) {
      this.setUp(false, error);
    }
  }

  private async sample(): Promise<void> {
    if (Date.now() - this.sampledAt < this.options.sampleMs) return;
    await this.primaryPosition().catch(() => {});
  }

  /** The primary's position now, remembered as a sample of the lag bound. */
  private async primaryPosition(): Promise<bigint> {
    const at = Date.now();
    const { rows } = await this.primaryQuery(POSITION);
    const lsn = positionOf(rows[0] as PositionRow);
    this.sampledAt = at;
    if (lsn > this.latest) this.latest = lsn;
    this.samples.push({ at, lsn });
    // The floor: the newest sample at least maxLagMs old; older ones are no longer needed.
    const bound = Date.now() - this.options.maxLagMs;
    let newestOld = -1;
    for (let i = 0; i < this.samples.length && this.samples[i]!.at <= bound; i++) newestOld = i;
    if (newestOld >= 0) {
      const old = this.samples[newestOld]!.lsn;
      if (old > this.floor) this.floor = old;
      this.samples.splice(0, newestOld + 1);
    }
    return lsn;
  }

  /**
   * Reads the primary's position for the fences raised so far; fences raised meanwhile need a read
   * started after them, so another follows.
   */
  private fetchRequired(): void {
    if (this.fetching || this.closed) return;
    this.fetching = true;
    const serial = this.fences;
    this.primaryPosition().then(
      (lsn) => {
        this.fetching = false;
        this.raise(lsn);
        if (serial > this.covered) this.covered = serial;
        if (this.covered < this.fences) this.fetchRequired();
        // The standby has usually replayed it already: look now rather than at the next poll.
        else if (this.replayed < this.required) void this.refresh();
      },
      () => {
        this.fetching = false;
      },
    );
  }
}
