import { type SQL, sql } from 'drizzle-orm';

/**
 * The LISTEN/NOTIFY protocol between replicas, in one place: the channel, the payloads the write
 * statements queue and how a listener reads them back.
 *
 * Every write transaction calls pg_notify on CHANGES_CHANNEL; PostgreSQL delivers the notification to
 * every listening connection when (and only if) the transaction commits, in commit order. Payloads:
 * `r:<revision>:<skill>` for a catalogue change (publish, tag move, yank; the skill may be empty) and
 * `l:<loads revision>` when recorded layer-2 loads were written.
 */
export const CHANGES_CHANNEL = 'skillreg_changes';

export type ChangeMessage =
  | { kind: 'revision'; revision: number; skill?: string }
  | { kind: 'loads'; loadsRevision: number };

/** `pg_notify(...)` for a catalogue change: `revision` and `skill` are SQL expressions of the statement. */
export function notifyRevision(revision: SQL, skill: SQL): SQL {
  return sql`pg_notify(${CHANGES_CHANNEL}, 'r:' || ${revision} || ':' || coalesce(${skill}, ''))`;
}

/** `pg_notify(...)` for written loads: `loadsRevision` is an SQL expression of the statement. */
export function notifyLoads(loadsRevision: SQL): SQL {
  return sql`pg_notify(${CHANGES_CHANNEL}, 'l:' || ${loadsRevision})`;
}

export function parseChangeMessage(payload: string): ChangeMessage | undefined {
  const [kind, number, ...rest] = payload.split(':');
  const value = Number(number);
  if (!Number.isSafeInteger(value) || value < 0) return undefined;
  if (kind === 'r') {
    const skill = rest.join(':');
    return skill ? { kind: 'revision', revision: value, skill } : { kind: 'revision', revision: value };
  }
  if (kind === 'l') return { kind: 'loads', loadsRevision: value };
  return undefined;
}
