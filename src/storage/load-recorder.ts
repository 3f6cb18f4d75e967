import { sql } from 'drizzle-orm';
import { notifyLoads } from '../db/change-notifications.js';
import type { Db } from '../db/client.js';
import { splitSkillKey } from '../namespaces.js';

/**
 * Counts layer-2 loads per skill. Reads must stay cheap, so loads are tallied in memory and written
 * in one statement every few seconds (and on shutdown) instead of one UPDATE per read.
 */
export class LoadRecorder {
  private pending = new Map<string, { count: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly listeners: ((name: string) => void)[] = [];
  private readonly flushListeners: ((loadsRevision: number) => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 2_000,
  ) {}

  /** Calls `listener` with the new loads revision after each batch is written (the read cache). */
  onFlushed(listener: (loadsRevision: number) => void): void {
    this.flushListeners.push(listener);
  }

  /** Calls `listener` on every recorded load, as it happens (the metrics plugin counts loads per skill). */
  onRecord(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /** A load of the skill `key` (src/namespaces.ts skillKey: the bare name in `default`). */
  record(key: string): void {
    for (const listener of this.listeners) listener(key);
    const entry = this.pending.get(key);
    if (entry) {
      entry.count += 1;
      entry.at = Date.now();
    } else {
      this.pending.set(key, { count: 1, at: Date.now() });
    }
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs).unref();
  }

  /** Writes what was tallied; safe to call at any time, concurrent calls share one write. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.entries()];
    this.pending = new Map();
    this.flushing = this.write(batch)
      .catch(() => {
        // Usage counts are advisory: losing a batch when the database is away is acceptable.
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private async write(batch: [string, { count: number; at: number }][]): Promise<void> {
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
