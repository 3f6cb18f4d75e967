import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

/** A skill as the vendor faces list it: live (its `latest` is servable), with its current version. */
export interface VendorSkillRow {
  id: string;
  name: string;
  displayName: string | null;
  createdAt: Date;
  updatedAt: Date;
  latestVersion: string;
  description: string;
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

interface SkillRecord {
  id: string;
  name: string;
  display_name: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  latest_version: string;
  description: string;
}

function skillOf(row: SkillRecord): VendorSkillRow {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    latestVersion: row.latest_version,
    description: row.description,
  };
}

const SKILL_COLUMNS = sql`s.id, s.name, s.display_name, s.created_at, s.updated_at, v.version as latest_version, v.description`;
const LIVE = sql`join dist_tags t on t.skill_id = s.id and t.tag = 'latest'
  join skill_versions v on v.id = t.version_id and v.yanked_at is null and v.quarantine is null`;

/** Queries behind the vendor-compatible faces (src/services/vendor-skills.ts). */
export class VendorRepository {
  constructor(private readonly db: Db) {}

  /** Live skills of a namespace by name, after `afterName`, at most `limit`. */
  async skills(namespace: string, afterName: string | undefined, limit: number): Promise<VendorSkillRow[]> {
    const after = afterName === undefined ? sql`` : sql`and s.name > ${afterName}`;
    return rowsOf<SkillRecord>(
      await this.db.execute(sql`
        select ${SKILL_COLUMNS} from skills s ${LIVE}
        where s.namespace = ${namespace} ${after}
        order by s.name limit ${limit}`),
    ).map(skillOf);
  }

  /** One live skill of a namespace by its id. */
  async skill(namespace: string, id: string): Promise<VendorSkillRow | undefined> {
    const [row] = rowsOf<SkillRecord>(
      await this.db.execute(sql`
        select ${SKILL_COLUMNS} from skills s ${LIVE} where s.namespace = ${namespace} and s.id = ${id}::uuid`),
    );
    return row ? skillOf(row) : undefined;
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
