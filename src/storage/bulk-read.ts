import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { releaseRows } from './records.js';

/**
 * Reads every row of `query`, `batch` at a time, through a cursor in one read-only snapshot, handing
 * each batch to `onBatch` (its rows are let go once it returns).
 *
 * What a process reads whole at start (the search index, the agent catalogue copy) is read this way
 * rather than in pages by name: one plan for the whole read, which for a large catalogue joins whole
 * tables by hashing, where each page by key looks every row up in three indexes in an order unrelated
 * to where the rows lie (docs/PERFORMANCE.md). The snapshot is one, so the rows agree with the
 * revisions read with them. `onBatch` must not wait for another statement of this database: PGlite
 * runs one transaction at a time, and this one is open until the last batch.
 */
export async function readInBatches<Row>(
  db: Db,
  query: SQL,
  batch: number,
  onBatch: (rows: Row[]) => void | Promise<void>,
): Promise<void> {
  await db.transaction(
    async (tx) => {
      // A cursor is planned for its first rows (cursor_tuple_fraction 0.1: index lookups); this one is
      // read to its end.
      await tx.execute(sql`set local cursor_tuple_fraction = 1`);
      await tx.execute(sql`declare bulk_read no scroll cursor for ${query}`);
      const fetch = () => {
        // drizzle's query runs each time it is awaited: made a promise once, it runs once.
        const rows = Promise.resolve(
          tx.execute(sql.raw(`fetch forward ${Math.trunc(batch)} from bulk_read`)),
        ) as unknown as Promise<{ rows: Row[] }>;
        // Awaited below; until then a failure must not count as unhandled (onBatch may throw first).
        rows.catch(() => undefined);
        return rows;
      };
      let next = fetch();
      for (;;) {
        const { rows } = await next;
        const count = rows.length;
        // The next batch is asked for before this one is handled: the database reads it meanwhile.
        if (count === batch) next = fetch();
        if (count > 0) await onBatch(rows);
        releaseRows(rows);
        if (count < batch) break;
      }
      await tx.execute(sql`close bulk_read`);
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
