import { and, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditLog } from '../db/schema.js';
import { BadRequestError } from '../domain/app-errors.js';
import type { AuditAction } from '../domain/audit-actions.js';

export { AUDIT_ACTIONS, type AuditAction } from '../domain/audit-actions.js';

export interface AuditEntry {
  actor: string;
  action: AuditAction;
  namespace?: string;
  skill?: string;
  version?: string;
  detail?: Record<string, unknown>;
}

/** Written inside the transaction of the change it describes, so the log never disagrees with the data. */
export async function recordAudit(tx: Db, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    actor: entry.actor,
    action: entry.action,
    namespace: entry.namespace ?? null,
    skill: entry.skill ?? null,
    version: entry.version ?? null,
    detail: entry.detail ?? {},
  });
}

export interface AuditQuery {
  limit: number;
  /** nextCursor of the previous page (opaque). */
  cursor?: string;
  /** Entries older than this id: the paging parameter from before cursors, still honoured. */
  before?: number;
  /** Exact matches. */
  actor?: string;
  action?: AuditAction;
  namespace?: string;
  skill?: string;
  /** Entries at or after `since` and before `until`. */
  since?: Date;
  until?: Date;
}

/**
 * One page of the log, newest first, with the cursor of the next page (null on the last one). Paging
 * is by id (keyset), so entries written while a client walks the log never shift or repeat its pages.
 */
export async function listAudit(db: Db, query: AuditQuery) {
  if (query.cursor !== undefined && query.before !== undefined) {
    throw new BadRequestError(
      'pass either cursor= or before=, not both; cursor is the nextCursor of the previous page',
      {
        parameters: ['cursor', 'before'],
      },
    );
  }
  const before = query.cursor !== undefined ? decodeAuditCursor(query.cursor) : query.before;
  const conditions: SQL[] = [];
  if (before !== undefined) conditions.push(lt(auditLog.id, before));
  if (query.actor !== undefined) conditions.push(eq(auditLog.actor, query.actor));
  if (query.action !== undefined) conditions.push(eq(auditLog.action, query.action));
  if (query.namespace !== undefined) conditions.push(eq(auditLog.namespace, query.namespace));
  if (query.skill !== undefined) conditions.push(eq(auditLog.skill, query.skill));
  if (query.since !== undefined) conditions.push(gte(auditLog.at, query.since));
  if (query.until !== undefined) conditions.push(lt(auditLog.at, query.until));
  const rows = await db
    .select()
    .from(auditLog)
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(auditLog.id))
    .limit(query.limit + 1);
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  const nextCursor = rows.length > query.limit && last ? encodeAuditCursor(last.id) : null;
  return { items, nextCursor };
}

function encodeAuditCursor(before: number): string {
  return Buffer.from(JSON.stringify({ before })).toString('base64url');
}

function decodeAuditCursor(raw: string): number {
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { before?: unknown };
    if (typeof cursor.before === 'number' && Number.isSafeInteger(cursor.before) && cursor.before > 0) {
      return cursor.before;
    }
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError(
    'cursor is not one this registry issued; pass the nextCursor value of the previous page of GET /audit unchanged',
    { parameter: 'cursor' },
  );
}

/** The audit log as the admin API reads it. */
export class AuditRepository {
  constructor(private readonly db: Db) {}

  list(query: AuditQuery) {
    return listAudit(this.db, query);
  }
}
