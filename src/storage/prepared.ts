import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.js';

const dialect = new PgDialect();

/**
 * A statement built once and run as a named prepared statement: PostgreSQL plans it once per
 * connection (for the reads run on every request, planning costs more than running them), and its
 * text is not rebuilt on every call. Values are `sql.placeholder(key)`s, given per call. PGlite
 * runs it as any other statement.
 *
 * `name` must be unique to the statement: PostgreSQL keeps each connection's statements by name.
 */
export function preparedStatement<Row>(
  db: Db,
  name: string,
  statement: SQL,
): (values: Record<string, unknown>) => Promise<Row[]> {
  const prepared = db._.session.prepareQuery(dialect.sqlToQuery(statement), undefined, name, false);
  return async (values) => {
    const result = (await prepared.execute(values)) as unknown as { rows: Row[] };
    return result.rows;
  };
}
