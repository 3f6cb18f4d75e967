import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { skills } from '../db/schema.js';

/**
 * What the vendor faces add to a listed skill: its row id (their opaque id), display name and dates.
 * Whether a skill is live, and its current version, are the registry's listing's to say
 * (src/services/listing.ts), not this repository's.
 */
export interface VendorSkillFacts {
  id: string;
  name: string;
  displayName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A servable version of a skill, with its place in publish order (1 for the first ever published). */
export interface VendorVersionRow {
  id: string;
  version: string;
  ordinal: number;
  name: string;
  description: string;
  createdAt: Date;
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));

const FACTS = {
  id: skills.id,
  name: skills.name,
  displayName: skills.displayName,
  createdAt: skills.createdAt,
  updatedAt: skills.updatedAt,
};

/** Queries behind the vendor-compatible faces (src/services/vendor-skills.ts). */
export class VendorRepository {
  constructor(private readonly db: Db) {}

  /** The facts of the named skills of a namespace (live or not), by name. */
  async factsOf(namespace: string, names: readonly string[]): Promise<Map<string, VendorSkillFacts>> {
    if (names.length === 0) return new Map();
    const rows = await this.db
      .select(FACTS)
      .from(skills)
      .where(and(eq(skills.namespace, namespace), inArray(skills.name, [...names])));
    return new Map(rows.map((row) => [row.name, row]));
  }

  /** The facts of one skill of a namespace by its row id (live or not). */
  async factsById(namespace: string, id: string): Promise<VendorSkillFacts | undefined> {
    const [row] = await this.db
      .select(FACTS)
      .from(skills)
      .where(and(eq(skills.namespace, namespace), eq(skills.id, id)));
    return row;
  }

  /** The servable (not yanked, not quarantined) versions of a skill, newest first. */
  async versions(skillId: string): Promise<VendorVersionRow[]> {
    const rows = rowsOf<{
      id: string;
      version: string;
      ordinal: string;
      name: string;
      description: string;
      created_at: Date | string;
      servable: boolean;
    }>(
      await this.db.execute(sql`
        select id, version, name, description, created_at,
          (row_number() over (order by created_at, id))::text as ordinal,
          (yanked_at is null and quarantine is null) as servable
        from skill_versions where skill_id = ${skillId}::uuid
        order by created_at desc, id desc`),
    );
    return rows
      .filter((row) => row.servable)
      .map((row) => ({
        id: row.id,
        version: row.version,
        ordinal: Number(row.ordinal),
        name: row.name,
        description: row.description,
        createdAt: date(row.created_at),
      }));
  }

  /** Sets the display name of a skill (null: its name is shown). */
  async setDisplayName(skillId: string, displayName: string | null): Promise<void> {
    await this.db.execute(sql`update skills set display_name = ${displayName} where id = ${skillId}::uuid`);
  }

  /** The id of a skill of a namespace by name, live or not. */
  async idOf(namespace: string, name: string): Promise<string | undefined> {
    const [row] = rowsOf<{ id: string }>(
      await this.db.execute(sql`select id from skills where namespace = ${namespace} and name = ${name}`),
    );
    return row?.id;
  }
}
