import { sql } from 'drizzle-orm';
import { notifyRevision } from '../db/change-notifications.js';
import type { Db } from '../db/client.js';
import { registryState } from '../db/schema.js';

/**
 * Bumps the catalogue revision inside a write transaction and queues the NOTIFY of `changeKey` (a
 * view edit, a namespace deletion: src/cache/catalogue-state.ts), which every replica receives when
 * the transaction commits. Answers the new revision. Skill writes bump theirs in SkillWrite.touch.
 */
export async function bumpRevision(db: Db, changeKey: string): Promise<number> {
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
