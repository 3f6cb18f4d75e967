import { asc, eq, sql } from 'drizzle-orm';
import { notifyRevision } from '../db/change-notifications.js';
import type { Db } from '../db/client.js';
import { registryState, views } from '../db/schema.js';
import { recordAudit } from './audit-repository.js';
import type { CatalogueChange } from './records.js';

/** A view as stored. */
export interface StoredView {
  name: string;
  layers: string[];
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The catalogue revision of the view's last edit. */
  revision: number;
}

const viewColumns = {
  name: views.name,
  layers: views.layers,
  description: views.description,
  createdAt: views.createdAt,
  updatedAt: views.updatedAt,
  revision: views.revision,
};

/**
 * Views, and their edits: each edit bumps the catalogue revision and notifies every replica under
 * the view's change key (src/cache/catalogue-state.ts viewChangeKey), in the transaction that makes it.
 */
export class ViewsRepository {
  constructor(
    private readonly db: Db,
    /** Hears of each committed edit at once (this process's read cache, as for skill writes). */
    private readonly announce: (change: CatalogueChange) => void,
  ) {}

  async get(name: string): Promise<StoredView | undefined> {
    const [row] = await this.db.select(viewColumns).from(views).where(eq(views.name, name));
    return row && { ...row, revision: Number(row.revision) };
  }

  async list(): Promise<StoredView[]> {
    const rows = await this.db.select(viewColumns).from(views).orderBy(asc(views.name));
    return rows.map((row) => ({ ...row, revision: Number(row.revision) }));
  }

  /** Views whose layers include `namespace`, by name. */
  async using(namespace: string): Promise<string[]> {
    const rows = await this.db
      .select({ name: views.name })
      .from(views)
      .where(sql`${namespace} = any(${views.layers})`)
      .orderBy(asc(views.name));
    return rows.map((row) => row.name);
  }

  /** Creates or replaces a view; answers it and whether it was created. */
  async put(
    input: { name: string; layers: string[]; description: string | null },
    actor: string,
    changeKey: string,
  ): Promise<{ view: StoredView; created: boolean }> {
    let change: CatalogueChange | undefined;
    const result = await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      const previous = await db.select(viewColumns).from(views).where(eq(views.name, input.name));
      const revision = await bump(db, changeKey);
      const [row] = await db
        .insert(views)
        .values({ ...input, revision })
        .onConflictDoUpdate({
          target: views.name,
          set: { layers: input.layers, description: input.description, updatedAt: new Date(), revision },
        })
        .returning(viewColumns);
      await recordAudit(db, {
        actor,
        action: 'view.put',
        detail: {
          view: input.name,
          layers: input.layers,
          ...(previous[0] ? { previousLayers: previous[0].layers } : {}),
        },
      });
      change = { revision, skill: changeKey };
      return { view: { ...row!, revision: Number(row!.revision) }, created: previous.length === 0 };
    });
    if (change) this.announce(change);
    return result;
  }

  /** Deletes a view; false when there was none. */
  async delete(name: string, actor: string, changeKey: string): Promise<boolean> {
    let change: CatalogueChange | undefined;
    const deleted = await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      const [row] = await db.delete(views).where(eq(views.name, name)).returning({ layers: views.layers });
      if (!row) return false;
      const revision = await bump(db, changeKey);
      await recordAudit(db, { actor, action: 'view.delete', detail: { view: name, layers: row.layers } });
      change = { revision, skill: changeKey };
      return true;
    });
    if (change) this.announce(change);
    return deleted;
  }
}

/** Bumps the catalogue revision and queues the NOTIFY of `changeKey`; answers the new revision. */
async function bump(db: Db, changeKey: string): Promise<number> {
  const result = await db.execute(sql`
    with bumped as (
      update ${registryState} set revision = ${registryState.revision} + 1, updated_at = now()
      where ${registryState.id} = 1 returning ${registryState.revision}
    )
    select bumped.revision::text as revision, ${notifyRevision(sql`bumped.revision`, sql`${changeKey}`)}
    from bumped`);
  const [row] = (result as unknown as { rows: { revision: string }[] }).rows;
  return Number(row!.revision);
}
