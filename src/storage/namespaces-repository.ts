import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { distTags, namespaces, searchFeedback, skills, skillVersions, views } from '../db/schema.js';
import { recordAudit } from './audit-repository.js';
import { type CatalogueChange, LATEST, releaseRows } from './records.js';
import { bumpRevision } from './revision.js';

/** A namespace as GET /namespaces lists it. */
export interface NamespaceSummary {
  name: string;
  /** Skills with a servable `latest` version (a skill with every version yanked is not counted). */
  skills: number;
  createdAt: Date;
}

/** Namespaces: which exist, and what they hold. */
/** What deleting a namespace did, or why it did not. */
export type NamespaceDeletion =
  | { deleted: true; skills: number; versions: number }
  | { deleted: false; reason: 'missing' }
  | { deleted: false; reason: 'used'; views: string[] };

export class NamespacesRepository {
  constructor(
    private readonly db: Db,
    /** Hears of each committed deletion at once (this process's read cache, as for skill writes). */
    private readonly announce: (change: CatalogueChange) => void = () => {},
  ) {}

  /**
   * Deletes a namespace with every skill, version, tag and file list in it, unless a view uses it.
   * The namespace row is locked first: a view being saved over it holds it shared, so the two never
   * pass each other (the view then fails, or the deletion sees it).
   */
  async delete(namespace: string, actor: string, changeKey: string): Promise<NamespaceDeletion> {
    let change: CatalogueChange | undefined;
    const outcome = await this.db.transaction(async (tx): Promise<NamespaceDeletion> => {
      const db = tx as unknown as Db;
      const locked = await db.execute(
        sql`select ${namespaces.name} from ${namespaces} where ${namespaces.name} = ${namespace} for update`,
      );
      if ((locked as unknown as { rows: unknown[] }).rows.length === 0)
        return { deleted: false, reason: 'missing' };
      const using = await db
        .select({ name: views.name })
        .from(views)
        .where(sql`${namespace} = any(${views.layers})`)
        .orderBy(asc(views.name));
      if (using.length > 0) return { deleted: false, reason: 'used', views: using.map((row) => row.name) };
      const counted = await db.execute(sql`
        select count(distinct ${skills.id})::int as skills, count(${skillVersions.id})::int as versions
        from ${skills} left join ${skillVersions} on ${skillVersions.skillId} = ${skills.id}
        where ${skills.namespace} = ${namespace}`);
      const [counts] = (counted as unknown as { rows: { skills: number; versions: number }[] }).rows;
      await db.delete(skills).where(eq(skills.namespace, namespace));
      await db.delete(searchFeedback).where(sql`${searchFeedback.skill} like ${`${namespace}/%`}`);
      await db.delete(namespaces).where(eq(namespaces.name, namespace));
      await recordAudit(db, {
        actor,
        action: 'namespace.delete',
        namespace,
        detail: { skills: counts?.skills ?? 0, versions: counts?.versions ?? 0 },
      });
      const revision = await bumpRevision(db, changeKey);
      change = { revision, skill: changeKey };
      return { deleted: true, skills: counts?.skills ?? 0, versions: counts?.versions ?? 0 };
    });
    if (change) this.announce(change);
    return outcome;
  }

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
          filter (where ${skillVersions.id} is not null and ${skillVersions.yankedAt} is null
            and ${skillVersions.quarantine} is null), '[]') as versions
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
