import { sql } from 'drizzle-orm';
import { notifyLoads } from '../db/change-notifications.js';
import type { Db } from '../db/client.js';
import { splitSkillKey } from '../domain/scope.js';

/** What a read of a skill counts as: a layer-2 load, a bundled-file read or a bundle download. */
export type UsageKind = 'loads' | 'files' | 'downloads';

interface DayCounts {
  key: string;
  version: string;
  day: string;
  loads: number;
  files: number;
  downloads: number;
}

/** How often old usage rows are deleted: once an hour per process is plenty for a window of days. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Rows per statement (PostgreSQL takes at most 65,535 parameters; a usage row has 7). */
const ROWS_PER_STATEMENT = 2_000;

const DAY_MS = 86_400_000;

/** The last day asked for: every read of a day asks for the same one, and formatting a date is not free. */
let lastDay = { number: Number.NaN, text: '' };

/** The UTC day of a time, as the usage table keys it. */
export function usageDay(at: number): string {
  const number = Math.floor(at / DAY_MS);
  if (number !== lastDay.number) {
    lastDay = { number, text: new Date(number * DAY_MS).toISOString().slice(0, 10) };
  }
  return lastDay.text;
}

/**
 * Counts usage: layer-2 loads per skill (the load count and recency budgets order by) and, per
 * skill, version and UTC day, loads, file reads and bundle downloads. Reads must stay cheap, so
 * everything is tallied in memory and written in one statement every few seconds (and on shutdown)
 * instead of one write per read.
 */
export class UsageRecorder {
  private pending = new Map<string, { count: number; at: number }>();
  private pendingDays = new Map<string, DayCounts>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private prunedAt = 0;
  private readonly listeners: ((name: string) => void)[] = [];
  private readonly flushListeners: ((loadsRevision: number) => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly options: { intervalMs?: number; keepDays?: number } = {},
  ) {}

  /** Calls `listener` with the new loads revision after each batch is written (the read cache). */
  onFlushed(listener: (loadsRevision: number) => void): void {
    this.flushListeners.push(listener);
  }

  /** Calls `listener` on every recorded load, as it happens (the metrics plugin counts loads per skill). */
  onRecord(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /** A layer-2 load of version `version` of the skill `key` (src/domain/scope.ts skillKey). */
  record(key: string, version: string): void {
    for (const listener of this.listeners) listener(key);
    const now = Date.now();
    const entry = this.pending.get(key);
    if (entry) {
      entry.count += 1;
      entry.at = now;
    } else {
      this.pending.set(key, { count: 1, at: now });
    }
    this.count(key, version, 'loads', now);
  }

  /** A bundled-file read or a bundle download of a version. */
  recordUse(key: string, version: string, kind: Exclude<UsageKind, 'loads'>): void {
    this.count(key, version, kind, Date.now());
  }

  private count(key: string, version: string, kind: UsageKind, at: number): void {
    const day = usageDay(at);
    const slot = `${key}\u0000${version}\u0000${day}`;
    let counts = this.pendingDays.get(slot);
    if (counts === undefined) {
      counts = { key, version, day, loads: 0, files: 0, downloads: 0 };
      this.pendingDays.set(slot, counts);
    }
    counts[kind] += 1;
    this.timer ??= setTimeout(() => void this.flush(), this.options.intervalMs ?? 2_000).unref();
  }

  /** Writes what was tallied; safe to call at any time, concurrent calls share one write. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0 && this.pendingDays.size === 0) return;
    const loads = [...this.pending.entries()];
    const days = [...this.pendingDays.values()];
    this.pending = new Map();
    this.pendingDays = new Map();
    this.flushing = this.write(loads, days)
      .catch(() => {
        // Usage counts are advisory: losing a batch when the database is away is acceptable.
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private async write(loads: [string, { count: number; at: number }][], days: DayCounts[]): Promise<void> {
    // Bounded statements: a busy window can touch more skills than one statement takes parameters.
    for (let start = 0; start < days.length; start += ROWS_PER_STATEMENT) {
      await this.writeDays(days.slice(start, start + ROWS_PER_STATEMENT));
    }
    for (let start = 0; start < loads.length; start += ROWS_PER_STATEMENT) {
      await this.writeLoads(loads.slice(start, start + ROWS_PER_STATEMENT));
    }
    if (Date.now() - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      await this.prune();
    }
  }

  /** Deletes usage older than the window kept (SKILLREG_USAGE_DAYS). */
  async prune(): Promise<void> {
    const keep = this.options.keepDays ?? 90;
    await this.db.execute(
      sql`delete from skill_usage where day < (now() at time zone 'utc')::date - ${keep}::int`,
    );
  }

  private async writeDays(days: DayCounts[]): Promise<void> {
    const rows = sql.join(
      days.map((entry) => {
        const { namespace, name } = splitSkillKey(entry.key);
        return sql`(${namespace}, ${name}, ${entry.version}, ${entry.day}::date, ${entry.loads}::bigint, ${entry.files}::bigint, ${entry.downloads}::bigint)`;
      }),
      sql`, `,
    );
    await this.db.execute(sql`
      insert into skill_usage (skill_id, version, day, loads, files, downloads)
      select skills.id, used.version, used.day, used.loads, used.files, used.downloads
      from (values ${rows}) as used(namespace, name, version, day, loads, files, downloads)
      join skills on skills.namespace = used.namespace and skills.name = used.name
      on conflict (skill_id, day, version) do update set
        loads = skill_usage.loads + excluded.loads,
        files = skill_usage.files + excluded.files,
        downloads = skill_usage.downloads + excluded.downloads`);
  }

  private async writeLoads(batch: [string, { count: number; at: number }][]): Promise<void> {
    const rows = sql.join(
      batch.map(([key, { count, at }]) => {
        const { namespace, name } = splitSkillKey(key);
        return sql`(${namespace}, ${name}, ${count}::bigint, ${new Date(at).toISOString()}::timestamptz)`;
      }),
      sql`, `,
    );
    // The loads revision goes up in the same statement, and every replica's read cache hears of it
    // (budgeted prompts are ordered by recency of use).
    const result = await this.db.execute(sql`
      with bumped as (
        update registry_state set loads_revision = loads_revision + 1 where id = 1 returning loads_revision
      ), updated as (
        update skills set load_count = skills.load_count + loads.count,
          last_loaded_at = greatest(skills.last_loaded_at, loads.at),
          loaded_revision = (select loads_revision from bumped)
        from (values ${rows}) as loads(namespace, name, count, at)
        where skills.namespace = loads.namespace and skills.name = loads.name
      )
      select bumped.loads_revision::text as loads_revision,
        ${notifyLoads(sql`bumped.loads_revision`)}
      from bumped`);
    const [row] = (result as unknown as { rows: { loads_revision: string }[] }).rows;
    if (row) for (const listener of this.flushListeners) listener(Number(row.loads_revision));
  }
}
