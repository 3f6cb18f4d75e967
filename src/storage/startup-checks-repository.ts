import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { registryState, startupChecks } from '../db/schema.js';

/** How far the start-up checks got (src/services/startup-checks.ts), by the catalogue revision. */
export class StartupChecksRepository {
  constructor(private readonly db: Db) {}

  /**
   * The catalogue revision now. Revisions are handed out under the revision row's lock in commit
   * order (SkillsRepository.touch), so every skill stamped at or below it is visible to what reads next.
   */
  async revision(): Promise<number> {
    const [row] = await this.db
      .select({ revision: registryState.revision })
      .from(registryState)
      .where(eq(registryState.id, 1));
    return row?.revision ?? 0;
  }

  /** The revision through which `name`'s last complete pass checked every skill, if one completed. */
  async checkedThrough(name: string): Promise<number | undefined> {
    const [row] = await this.db
      .select({ revision: startupChecks.revision })
      .from(startupChecks)
      .where(eq(startupChecks.name, name));
    return row?.revision;
  }

  /** Records a complete pass through `revision` (never moving back: replicas may finish out of order). */
  async record(name: string, revision: number): Promise<void> {
    await this.db
      .insert(startupChecks)
      .values({ name, revision })
      .onConflictDoUpdate({
        target: startupChecks.name,
        set: { revision: sql`greatest(${startupChecks.revision}, excluded.revision)`, checkedAt: sql`now()` },
      });
  }
}
