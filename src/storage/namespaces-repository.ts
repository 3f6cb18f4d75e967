import { asc, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { distTags, namespaces, skills, skillVersions } from '../db/schema.js';
import { LATEST, releaseRows } from './records.js';

/** A namespace as GET /namespaces lists it. */
export interface NamespaceSummary {
  name: string;
  /** Skills with a servable `latest` version (a skill with every version yanked is not counted). */
  skills: number;
  createdAt: Date;
}

/** Namespaces: which exist, and what they hold. */
export class NamespacesRepository {
  constructor(private readonly db: Db) {}

  /** Every namespace, by name, with its count of current skills. */
  async list(): Promise<NamespaceSummary[]> {
    const rows = await this.db
      .select({
        name: namespaces.name,
        createdAt: namespaces.createdAt,
        // Qualified by hand: drizzle writes a column of the outer table unqualified inside a subquery.
        skills: sql<number>`(select count(*) from ${skills} inner join ${distTags}
          on ${distTags.skillId} = ${skills.id} and ${distTags.tag} = ${LATEST}
          where ${skills.namespace} = "namespaces"."name")::int`,
      })
      .from(namespaces)
      .orderBy(asc(namespaces.name));
    return rows.map((row) => ({ ...row, skills: Number(row.skills) }));
  }

  /** Every skill of a namespace with its live (not yanked) versions and their digests, by name. */
  async digests(
    namespace: string,
  ): Promise<{ name: string; versions: { version: string; digest: string }[] }[]> {
    const result = await this.db.execute(sql`
      select ${skills.name} as name,
        coalesce(json_agg(json_build_object('version', ${skillVersions.version}, 'digest', ${skillVersions.digest}))
          filter (where ${skillVersions.id} is not null and ${skillVersions.yankedAt} is null), '[]') as versions
      from ${skills}
      left join ${skillVersions} on ${skillVersions.skillId} = ${skills.id}
      where ${skills.namespace} = ${namespace}
      group by ${skills.name}
      order by ${skills.name}`);
    const rows = (
      result as unknown as { rows: { name: string; versions: { version: string; digest: string }[] }[] }
    ).rows;
    const found = rows.map((row) => ({ name: row.name, versions: row.versions }));
    releaseRows(rows);
    return found;
  }
}
