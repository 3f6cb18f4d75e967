import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

/** Counts over a window. */
export interface UsageCounts {
  loads: number;
  files: number;
  downloads: number;
}

/** A current skill of a scope with its usage over a window. */
export interface SkillUsageRow extends UsageCounts {
  namespace: string;
  name: string;
  version: string;
  lastLoadedAt: Date | null;
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

const counts = (row: { loads: string; files: string; downloads: string }): UsageCounts => ({
  loads: Number(row.loads),
  files: Number(row.files),
  downloads: Number(row.downloads),
});

/** Reads of the usage the recorder writes (src/storage/usage-recorder.ts). */
export class UsageRepository {
  constructor(private readonly db: Db) {}

  /** A skill's usage per day since `since` (YYYY-MM-DD), days without any left out. */
  async days(skillId: string, since: string): Promise<(UsageCounts & { date: string })[]> {
    const rows = rowsOf<{ date: string; loads: string; files: string; downloads: string }>(
      await this.db.execute(sql`
        select to_char(day, 'YYYY-MM-DD') as date, sum(loads)::text as loads, sum(files)::text as files,
          sum(downloads)::text as downloads
        from skill_usage where skill_id = ${skillId} and day >= ${since}::date
        group by day order by day`),
    );
    return rows.map((row) => ({ date: row.date, ...counts(row) }));
  }

  /** A skill's usage per version since `since`, most loaded first. */
  async versions(skillId: string, since: string): Promise<(UsageCounts & { version: string })[]> {
    const rows = rowsOf<{ version: string; loads: string; files: string; downloads: string }>(
      await this.db.execute(sql`
        select version, sum(loads)::text as loads, sum(files)::text as files, sum(downloads)::text as downloads
        from skill_usage where skill_id = ${skillId} and day >= ${since}::date
        group by version order by sum(loads) desc, version`),
    );
    return rows.map((row) => ({ version: row.version, ...counts(row) }));
  }

  /**
   * The current skills of a scope (given as its layers, lowest precedence first: for each name the
   * highest layer with a servable `latest` wins) with their usage since `since`: the most used
   * (`which: 'top'`, anything counted, most loads first) or those never loaded (`'never'`, by name).
   */
  async scopeUsage(
    layers: readonly string[],
    since: string,
    which: 'top' | 'never',
    limit: number,
  ): Promise<{ rows: SkillUsageRow[]; total: number }> {
    const ranked = sql.join(
      layers.map((namespace, rank) => sql`(${namespace}::text, ${rank}::int)`),
      sql`, `,
    );
    const filter: SQL =
      which === 'top'
        ? sql`coalesce(u.loads, 0) + coalesce(u.files, 0) + coalesce(u.downloads, 0) > 0`
        : sql`coalesce(u.loads, 0) = 0`;
    const order: SQL =
      which === 'top'
        ? sql`coalesce(u.loads, 0) desc, coalesce(u.files, 0) + coalesce(u.downloads, 0) desc, c.name`
        : sql`c.name`;
    const rows = rowsOf<{
      namespace: string;
      name: string;
      version: string;
      last_loaded_at: Date | string | null;
      loads: string;
      files: string;
      downloads: string;
      total: string;
    }>(
      await this.db.execute(sql`
        with layers(namespace, rank) as (values ${ranked}),
        current as (
          select distinct on (s.name) s.id, s.namespace, s.name, s.last_loaded_at, v.version
          from skills s
          join layers l on l.namespace = s.namespace
          join dist_tags t on t.skill_id = s.id and t.tag = 'latest'
          join skill_versions v on v.id = t.version_id and v.yanked_at is null
          order by s.name, l.rank desc
        ),
        used as (
          select skill_id, sum(loads) as loads, sum(files) as files, sum(downloads) as downloads
          from skill_usage where day >= ${since}::date and skill_id in (select id from current)
          group by skill_id
        )
        select c.namespace, c.name, c.version, c.last_loaded_at,
          coalesce(u.loads, 0)::text as loads, coalesce(u.files, 0)::text as files,
          coalesce(u.downloads, 0)::text as downloads, count(*) over ()::text as total
        from current c left join used u on u.skill_id = c.id
        where ${filter}
        order by ${order}
        limit ${limit}`),
    );
    return {
      total: rows.length > 0 ? Number(rows[0]!.total) : 0,
      rows: rows.map((row) => ({
        namespace: row.namespace,
        name: row.name,
        version: row.version,
        lastLoadedAt: row.last_loaded_at === null ? null : new Date(row.last_loaded_at),
        ...counts(row),
      })),
    };
  }
}
