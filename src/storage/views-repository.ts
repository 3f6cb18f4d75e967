import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { namespaces, views } from '../db/schema.js';
import { recordAudit } from './audit-repository.js';
import type { CatalogueChange } from './records.js';
import { bumpRevision } from './revision.js';

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

  /**
   * Creates or replaces a view; answers it and whether it was created. Its layers' namespace rows are
   * locked for the transaction (a namespace deletion waits, then sees the view), and when one of them
   * does not exist `refuse` makes the error thrown, leaving everything as it was.
   */
  async put(
    input: { name: string; layers: string[]; description: string | null },
    actor: string,
    changeKey: string,
    refuse: (missing: string[]) => Error,
  ): Promise<{ view: StoredView; created: boolean }> {
    let change: CatalogueChange | undefined;
    const result = await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      const present = await db.execute(
        sql`select ${namespaces.name} as name from ${namespaces}
          where ${namespaces.name} = any(${sql.raw('ARRAY[')}${sql.join(
            input.layers.map((layer) => sql`${layer}`),
            sql`, `,
          )}${sql.raw(']::text[]')}) for share`,
      );
      const found = new Set((present as unknown as { rows: { name: string }[] }).rows.map((row) => row.name));
      const missing = input.layers.filter((layer) => !found.has(layer));
      if (missing.length > 0) throw refuse(missing);
      const previous = await db.select(viewColumns).from(views).where(eq(views.name, input.name));
      const revision = await bumpRevision(db, changeKey);
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
      const revision = await bumpRevision(db, changeKey);
      await recordAudit(db, { actor, action: 'view.delete', detail: { view: name, layers: row.layers } });
      change = { revision, skill: changeKey };
      return true;
    });
    if (change) this.announce(change);
    return deleted;
  }
}
