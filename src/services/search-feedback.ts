import { LRUCache } from 'lru-cache';
import { uniqueTerms } from '../search/search-index.js';
import type { SearchRepository } from '../storage/search-repository.js';

/**
 * What searches teach the ranking: when an agent loads a skill that a search of its own listed a few
 * minutes before, each word of that search counts one load for that skill (search-index.ts
 * learnedBoosts). Only the registry sees both halves, so only it can learn that "why is my build red"
 * ends in gh-fix-ci.
 *
 * An agent is told apart by its token and address (src/requests/client-key.ts), the closest the stateless faces allow;
 * a load counts only when the skill was among that client's recent results, so two agents behind one
 * address rarely teach each other's noise. Counts are tallied in memory, written every few seconds,
 * and every replica reads what all of them wrote.
 */

/** How long after a search a load of one of its results still counts. */
const FOLLOW_UP_MS = 15 * 60_000;
/** Searches remembered per client; clients remembered at once. */
const SEARCHES_PER_CLIENT = 4;
const MAX_CLIENTS = 5_000;
/** Words of one search that learn (the first of a long request: the request's point is usually early). */
const WORDS_PER_SEARCH = 24;
/** Results of a search a later load is matched against. */
const RESULTS_PER_SEARCH = 20;
/** Learned pairs held in memory; past it, the least loaded are dropped. */
const MAX_PAIRS = 200_000;

interface RecentSearch {
  at: number;
  terms: string[];
  names: Set<string>;
}

export class SearchFeedback {
  private readonly recent = new LRUCache<string, RecentSearch[]>({ max: MAX_CLIENTS, ttl: FOLLOW_UP_MS });
  private pending = new Map<string, { term: string; skill: string; loads: number }>();
  private readonly learned = new Map<string, Map<string, number>>();
  private pairs = 0;
  private seenUntil: Date | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly repository: SearchRepository,
    private readonly intervalMs = 5_000,
  ) {}

  /** A search a client ran, and the names it answered, best first. */
  noteSearch(client: string, query: string, names: readonly string[]): void {
    if (names.length === 0) return;
    const terms = uniqueTerms(query)
      .slice(0, WORDS_PER_SEARCH)
      .map((word) => word.term);
    const searches = this.recent.get(client) ?? [];
    searches.push({ at: Date.now(), terms, names: new Set(names.slice(0, RESULTS_PER_SEARCH)) });
    if (searches.length > SEARCHES_PER_CLIENT) searches.shift();
    this.recent.set(client, searches);
  }

  /** A layer-2 load by a client: it teaches the searches of that client that listed the skill. */
  noteLoad(client: string, skill: string): void {
    const searches = this.recent.get(client);
    if (!searches) return;
    const now = Date.now();
    for (const search of searches) {
      if (now - search.at > FOLLOW_UP_MS || !search.names.has(skill)) continue;
      // One search teaches once: loading the same result again is reading it, not choosing it.
      search.names.delete(skill);
      for (const term of search.terms) {
        const key = `${term}\u0000${skill}`;
        const entry = this.pending.get(key);
        if (entry) entry.loads += 1;
        else this.pending.set(key, { term, skill, loads: 1 });
        this.add(term, skill, 1);
      }
    }
    this.schedule();
  }

  /** The skills agents loaded after searching with `term`, and how many times. */
  loadsAfter(term: string): ReadonlyMap<string, number> | undefined {
    return this.learned.get(term);
  }

  /** Reads what every replica learned (at start, then after each write). */
  async sync(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = this.exchange().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.exchange().catch(() => undefined);
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sync().catch(() => undefined);
    }, this.intervalMs).unref();
  }

  /** Writes what this process learned, then reads what changed since the last read (any replica). */
  private async exchange(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.repository.addFeedback(batch);
    } catch {
      // Learned counts are advisory: a batch lost while the database is away costs a little ranking.
    }
    // A few seconds of overlap: a row committed late with an earlier timestamp is still read; rows
    // carry totals, so reading one twice changes nothing.
    const from = this.seenUntil ? new Date(this.seenUntil.getTime() - 5_000) : undefined;
    const rows = await this.repository.feedbackSince(from, MAX_PAIRS);
    for (const row of rows) {
      this.set(row.term, row.skill, row.loads);
      if (!this.seenUntil || row.updatedAt > this.seenUntil) this.seenUntil = row.updatedAt;
    }
  }

  private add(term: string, skill: string, loads: number): void {
    this.set(term, skill, (this.learned.get(term)?.get(skill) ?? 0) + loads);
  }

  private set(term: string, skill: string, loads: number): void {
    let bySkill = this.learned.get(term);
    if (!bySkill) {
      bySkill = new Map();
      this.learned.set(term, bySkill);
    }
    if (!bySkill.has(skill)) this.pairs += 1;
    bySkill.set(skill, Math.max(loads, bySkill.get(skill) ?? 0));
    if (this.pairs > MAX_PAIRS) this.forgetLeastLoaded();
  }

  /** Drops the pairs loaded once, then twice, until the memory bound holds again. */
  private forgetLeastLoaded(): void {
    for (let floor = 1; this.pairs > MAX_PAIRS * 0.9; floor++) {
      for (const [term, bySkill] of this.learned) {
        for (const [skill, loads] of bySkill) {
          if (loads > floor) continue;
          bySkill.delete(skill);
          this.pairs -= 1;
        }
        if (bySkill.size === 0) this.learned.delete(term);
      }
    }
  }
}
