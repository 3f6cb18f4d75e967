import { desc, lt } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditLog } from '../db/schema.js';

export interface AuditEntry {
  actor: string;
  action: 'publish' | 'tag' | 'yank' | 'token.create' | 'token.revoke';
  skill?: string;
  version?: string;
  detail?: Record<string, unknown>;
}

/** Written inside the transaction of the change it describes, so the log never disagrees with the data. */
export async function recordAudit(tx: Db, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    actor: entry.actor,
    action: entry.action,
    skill: entry.skill ?? null,
    version: entry.version ?? null,
    detail: entry.detail ?? {},
  });
}

export async function listAudit(db: Db, options: { limit: number; before?: number }) {
  const query = db.select().from(auditLog);
  const rows = await (options.before === undefined ? query : query.where(lt(auditLog.id, options.before)))
    .orderBy(desc(auditLog.id))
    .limit(options.limit);
  return rows;
}
