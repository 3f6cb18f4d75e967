import { asc, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { distTags, namespaces, skills } from '../db/schema.js';
import { LATEST } from './records.js';

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
}
