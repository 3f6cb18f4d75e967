import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import type { Scope } from '../domain/scope.js';
import type { CatalogueState, StateRow } from './catalogue-state.js';
import type { ChangeFeed, ChangeFeedOptions } from './change-feed.js';
import { ByteLru, sizeOf } from './lru.js';
import { acquireSharedState, type SharedState } from './shared-state.js';

/**
 * The in-process cache of hot reads. Three kinds of entries share one byte-bounded LRU:
 *
 * - immutable: keyed by something that never changes meaning (an exact version, a version id): file
 *   bytes, archives, rendered bodies. Kept until evicted.
 * - per skill: depends on one skill's current state (what `latest` or a tag points at, the metadata
 *   document, the version list). Stamped with the revision it was computed at; stale once a write to
 *   that skill (or an unknown write) with a higher revision is known.
 * - catalogue-wide: depends on every skill (catalogue pages, searches, prompts, tools, the discovery
 *   index). Valid only for the exact revision (and loads revision) it was computed at.
 *
 * Misses are single-flight: concurrent requests for the same entry at the same revision share one
 * computation, so a publish does not send every waiting agent to the database at once.
 *
 * Auth is never cached: routes authorize every request before asking the cache. What an entry holds
 * and when it is asked for is the services' business: each read describes what it depends on once
 * (src/services/cached-read.ts), which picks the tier, the key and the ETag together. This is the
 * mechanism.
 */
export interface ReadCacheOptions {
  /** Bytes the entries may hold together (default 64 MiB); 0 stores nothing (every read recomputed). */
  maxBytes?: number;
  /** Largest single entry (default an eighth of maxBytes): a larger file or archive is served, not kept. */
  maxEntryBytes?: number;
  /** The PostgreSQL change feed (LISTEN) timings. */
  feed?: ChangeFeedOptions;
}

export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

export type CacheKind = 'immutable' | 'skill' | 'catalogue';

export interface CacheCounters {
  hits: Record<CacheKind, number>;
  misses: Record<CacheKind, number>;
}

/** Loads-only changes re-render an expensive rendering at most once per this many times its cost... */
const LOADS_REFRESH_FACTOR = 20;
/** ...if it took at least this long (cheap renderings always follow the loads)... */
const LOADS_REFRESH_MIN_COST_MS = 20;
/** ...and at least once a minute. */
const LOADS_REFRESH_MAX_MS = 60_000;

interface LoadsEntry<T> {
  value: T;
  loadsRevision: number;
  renderMs: number;
  renderedAt: number;
}

interface Stamped<T> {
  stamp: number | string;
  value: T;
}

/** A value with what it costs in memory: every compute function answers one (see measured). */
export interface Sized<T> {
  value: T;
  bytes: number;
}

/**
 * A value with its size as sizeOf() estimates it, for values that do not know their own. The size is
 * estimated when the cache keeps the value, not before: with the cache off nothing is kept.
 */
export function measured<T>(value: T): Sized<T> {
  return new Measured(value);
}

/**
 * A class, not an object literal with a getter closing over the value: on Node 20 what such a
 * literal refers to survives every scavenge (measured in docs/PERFORMANCE.md), so every value it
 * held (a catalogue page's rows) waited for a full collection, which then ran every second under load.
 */
class Measured<T> implements Sized<T> {
  private size: number | undefined;

  /** @param estimate how the size is found when first asked for (default: sizeOf the value) */
  constructor(
    readonly value: T,
    private readonly estimate: () => number = () => sizeOf(value),
  ) {}

  get bytes(): number {
    this.size ??= this.estimate();
    return this.size;
  }
}

/** Where the cache hears of writes as they commit in this process (the repositories' hooks). */
export interface WriteHooks {
  onChange(listener: (change: { revision: number; skill?: string }) => void): void;
  onFlushed(listener: (loadsRevision: number) => void): void;
}

export class ReadCache {
  readonly state: CatalogueState;
  /** False when maxBytes is 0: every read is recomputed (and in-memory copies check on every read). */
  readonly keeps: boolean;
  private readonly lru: ByteLru<Stamped<unknown>>;
  private readonly inflight = new Map<string, Promise<unknown>>();
  readonly counters: CacheCounters = {
    hits: { immutable: 0, skill: 0, catalogue: 0 },
    misses: { immutable: 0, skill: 0, catalogue: 0 },
  };

  private constructor(
    private readonly shared: SharedState,
    options: ReadCacheOptions,
  ) {
    const maxBytes = options.maxBytes ?? DEFAULT_CACHE_BYTES;
    this.lru = new ByteLru(maxBytes, options.maxEntryBytes ?? Math.floor(maxBytes / 8));
    this.state = shared.state;
    this.keeps = maxBytes > 0;
  }

  /**
   * Wires the cache to this app's writes (repository and load recorder hooks) and to the state shared
   * by every app on the same database handle, which on PostgreSQL follows every replica's writes through
   * LISTEN. Resolves once the state is known; the feed may still be connecting, in which case reads
   * fall back to the revision row until it is live.
   */
  static async open(deps: {
    database: Database;
    /** Reads the registry_state row (revision and loads revision). */
    readState: () => Promise<StateRow>;
    writes: WriteHooks;
    options?: ReadCacheOptions;
    log?: FastifyBaseLogger;
  }): Promise<ReadCache> {
    const { database, readState, writes, log } = deps;
    const options = deps.options ?? {};
    const shared = await acquireSharedState(database, readState, { feed: options.feed, log });
    const { state } = shared;
    writes.onChange((change) => state.observeChange(change.revision, change.skill));
    writes.onFlushed((loadsRevision) => state.observeLoads(loadsRevision));
    return new ReadCache(shared, options);
  }

  async close(): Promise<void> {
    this.lru.clear();
    await this.shared.release();
  }

  /** The change feed of this database handle, when there is one (tests drop its connection). */
  get changeFeed(): ChangeFeed | undefined {
    return this.shared.feed;
  }

  /** Catalogue revision and loads revision as of this request: no query while the state is live. */
  current(): Promise<StateRow> {
    return this.state.current();
  }

  async revision(): Promise<number> {
    return (await this.state.current()).revision;
  }

  /** The revision of what `scope` shows, as of this request (CatalogueState.scopeRevision). */
  async scopeRevision(scope: Scope): Promise<number> {
    await this.state.current();
    return this.state.scopeRevision(scope);
  }

  stats() {
    return { ...this.lru.stats(), live: this.state.live, ...this.counters };
  }

  /** A value that never changes for `key` (exact versions, version ids, digests). */
  immutable<T>(key: string, compute: () => Promise<Sized<T>>): Promise<T> {
    const full = `i|${key}`;
    const hit = this.lru.get(full) as Stamped<T> | undefined;
    if (hit) {
      this.counters.hits.immutable += 1;
      return Promise.resolve(hit.value);
    }
    this.counters.misses.immutable += 1;
    return this.singleFlight(full, 0, compute);
  }

  /**
   * A value that depends on one skill's current state, computed at catalogue revision `at` (read
   * before computing). Reused until a write to that skill with a higher revision is known.
   */
  perSkill<T>(skill: string, key: string, at: number, compute: () => Promise<Sized<T>>): Promise<T> {
    const full = `s|${skill}|${key}`;
    const hit = this.lru.get(full) as Stamped<T> | undefined;
    if (hit && typeof hit.stamp === 'number' && this.state.isFresh(skill, hit.stamp)) {
      this.counters.hits.skill += 1;
      return Promise.resolve(hit.value);
    }
    this.counters.misses.skill += 1;
    return this.singleFlight(full, at, compute);
  }

  /**
   * A value that depends on the whole catalogue, valid only for exactly `stamp` (the revision, plus
   * the loads revision for renderings ordered by use).
   */
  catalogueWide<T>(key: string, stamp: number | string, compute: () => Promise<Sized<T>>): Promise<T> {
    const full = `c|${key}`;
    const hit = this.lru.get(full) as Stamped<T> | undefined;
    if (hit && hit.stamp === stamp) {
      this.counters.hits.catalogue += 1;
      return Promise.resolve(hit.value);
    }
    this.counters.misses.catalogue += 1;
    return this.singleFlight(full, stamp, compute);
  }

  /**
   * Like catalogueWide, for renderings that also depend on the loads revision (budgeted prompts drop
   * the least loaded skills first). Loads only order such a rendering, and are themselves
   * written in batches every few seconds; so when the rendering is expensive, a change of loads alone
   * renders it again at most once per LOADS_REFRESH_FACTOR times its cost (capped at a minute). However
   * busy the content routes keep the loads, re-rendering then stays a small share of the process's time.
   * A catalogue change (revision) always renders again. Answers the value and the loads revision it
   * was rendered at, which the ETag must name.
   */
  async byLoads<T>(
    key: string,
    revision: number,
    loadsRevision: number,
    compute: () => Promise<Sized<T>>,
  ): Promise<{ value: T; loadsRevision: number }> {
    const full = `l|${key}`;
    const hit = this.lru.get(full) as Stamped<LoadsEntry<T>> | undefined;
    if (hit && hit.stamp === revision) {
      const entry = hit.value;
      const age = Date.now() - entry.renderedAt;
      const throttle =
        entry.renderMs >= LOADS_REFRESH_MIN_COST_MS
          ? Math.min(LOADS_REFRESH_MAX_MS, entry.renderMs * LOADS_REFRESH_FACTOR)
          : 0;
      if (entry.loadsRevision === loadsRevision || age < throttle) {
        this.counters.hits.catalogue += 1;
        return { value: entry.value, loadsRevision: entry.loadsRevision };
      }
    }
    this.counters.misses.catalogue += 1;
    const entry = await this.singleFlight<LoadsEntry<T>>(
      full,
      revision,
      async () => {
        const started = performance.now();
        const computed = await compute();
        const entry = {
          value: computed.value,
          loadsRevision,
          renderMs: performance.now() - started,
          renderedAt: Date.now(),
        };
        return new Measured(entry, () => computed.bytes + 64);
      },
      `${revision}.${loadsRevision}`,
    );
    return { value: entry.value, loadsRevision: entry.loadsRevision };
  }

  /** An immutable entry if it is held, without counting a lookup or refreshing its recency. */
  peekImmutable<T>(key: string): T | undefined {
    return (this.lru.peek(`i|${key}`) as Stamped<T> | undefined)?.value;
  }

  /** Keeps `value` as the immutable entry `key` (a value computed elsewhere that never changes). */
  keepImmutable(key: string, value: unknown): void {
    this.store(`i|${key}`, { stamp: 0, value }, measured(value));
  }

  private singleFlight<T>(
    full: string,
    stamp: number | string,
    compute: () => Promise<Sized<T>>,
    flight: number | string = stamp,
  ): Promise<T> {
    const flightKey = `${full}@${flight}`;
    const pending = this.inflight.get(flightKey) as Promise<T> | undefined;
    if (pending) return pending;
    const promise = (async () => {
      try {
        const computed = await compute();
        this.store(full, { stamp, value: computed.value }, computed);
        return computed.value;
      } finally {
        this.inflight.delete(flightKey);
      }
    })();
    this.inflight.set(flightKey, promise);
    return promise;
  }

  private store(full: string, entry: Stamped<unknown>, size: { readonly bytes: number }): void {
    if (!this.keeps) return;
    // A slower computation at an older revision must not replace a newer entry.
    const existing = this.lru.peek(full) as Stamped<unknown> | undefined;
    if (
      existing &&
      typeof existing.stamp === 'number' &&
      typeof entry.stamp === 'number' &&
      existing.stamp > entry.stamp
    ) {
      return;
    }
    this.lru.set(full, entry, size.bytes + 48);
  }
}
