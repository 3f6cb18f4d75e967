import pg from 'pg';
import { CHANGES_CHANNEL, type ChangeMessage, parseChangeMessage } from '../db/change-notifications.js';

export interface ChangeFeedHandlers {
  onMessage(message: ChangeMessage): void;
  /**
   * Runs once LISTEN is in place (every notification from now on arrives): reads what may have been
   * missed while not listening. When it resolves and the connection is still up, the feed is live.
   */
  resync(): Promise<void>;
  /** The feed went live (true) or lost its connection (false). */
  onLiveChange(live: boolean): void;
  /**
   * A heartbeat came back: every notification of a write committed before `sentAt` (performance.now()
   * when it was sent) has been delivered, since PostgreSQL sends a listener's pending notifications
   * before the answer to its next query.
   */
  onConfirmed?(sentAt: number): void;
  onError?(error: unknown, context: string): void;
}

/**
 * How often the listening connection proves itself (CatalogueState's lease): a few times within the
 * lease, so a late heartbeat or two under load does not end it.
 */
export const FEED_HEARTBEAT_MS = 200;
/** How long one proof keeps memory trusted: under the contract's 1 s, with room for a slow read. */
export const FRESHNESS_LEASE_MS = 700;

export interface ChangeFeedOptions {
  /** How often the listening connection is checked with `select 1` (a silent network loss is found). */
  heartbeatMs?: number;
  /** Longest wait for the heartbeat's answer before the connection is dropped and opened again. */
  heartbeatTimeoutMs?: number;
  /** First reconnect delay; doubles on each failure up to reconnectMaxMs. */
  reconnectMs?: number;
  reconnectMaxMs?: number;
}

/**
 * One dedicated PostgreSQL connection that LISTENs for other replicas' writes, reconnecting on error
 * with backoff. Between losing the connection and the resync after the next one, the feed is not live
 * and readers fall back to reading the revision row on every request.
 */
export class ChangeFeed {
  private client: pg.Client | undefined;
  private closed = false;
  private live = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatInFlight = false;
  private delay: number;
  private readonly options: Required<ChangeFeedOptions>;
  /** Process id of the listening backend (tests terminate it to simulate a lost connection). */
  backendPid: number | undefined;

  constructor(
    private readonly url: string,
    private readonly handlers: ChangeFeedHandlers,
    options: ChangeFeedOptions = {},
  ) {
    this.options = {
      heartbeatMs: options.heartbeatMs ?? FEED_HEARTBEAT_MS,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 2_000,
      reconnectMs: options.reconnectMs ?? 100,
      reconnectMaxMs: options.reconnectMaxMs ?? 5_000,
    };
    this.delay = this.options.reconnectMs;
  }

  get isLive(): boolean {
    return this.live;
  }

  /** Connects in the background; resolves after the first attempt (successful or not). */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeatTimer);
    const client = this.client;
    this.client = undefined;
    this.setLive(false);
    await client?.end().catch(() => {});
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    this.handlers.onLiveChange(live);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      application_name: 'skillreg-change-feed',
    });
    this.client = client;
    client.on('error', (error) => this.drop(client, error, 'connection error'));
    client.on('end', () => this.drop(client, undefined, 'connection ended'));
    client.on('notification', (message) => {
      if (message.channel !== CHANGES_CHANNEL || this.client !== client) return;
      const parsed = parseChangeMessage(message.payload ?? '');
      if (parsed) this.handlers.onMessage(parsed);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      const pid = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      this.backendPid = pid.rows[0]?.pid;
      if (this.client !== client) return;
      await this.handlers.resync();
    } catch (error) {
      this.drop(client, error, 'connect');
      return;
    }
    if (this.client !== client || this.closed) return;
    this.delay = this.options.reconnectMs;
    this.setLive(true);
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(client), this.options.heartbeatMs).unref();
  }

  private async heartbeat(client: pg.Client): Promise<void> {
    if (this.heartbeatInFlight || this.client !== client) return;
    this.heartbeatInFlight = true;
    const sentAt = performance.now();
    try {
      // pg reads a per-query `query_timeout`, which @types/pg does not declare.
      await client.query({
        text: 'select 1',
        query_timeout: this.options.heartbeatTimeoutMs,
      } as pg.QueryConfig);
      if (this.client === client) this.handlers.onConfirmed?.(sentAt);
    } catch (error) {
      this.drop(client, error, 'heartbeat');
    } finally {
      this.heartbeatInFlight = false;
    }
  }

  private drop(client: pg.Client, error: unknown, context: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.backendPid = undefined;
    clearInterval(this.heartbeatTimer);
    this.setLive(false);
    if (!this.closed && error !== undefined) this.handlers.onError?.(error, context);
    client.end().catch(() => {});
    if (this.closed) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.connect(), this.delay).unref();
    this.delay = Math.min(this.delay * 2, this.options.reconnectMaxMs);
  }
}
