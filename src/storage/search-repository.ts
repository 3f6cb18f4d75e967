import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { distTags, searchFeedback, skills, skillVersions } from '../db/schema.js';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import { readInBatches } from './bulk-read.js';
import { releaseRows, withStateRevision } from './records.js';

/** One tagged version as the search index reads it. */
export interface SearchRow {
  versionId: string;
  name: string;
  version: string;
  /** The stored counted terms (src/search/document.ts); null for versions stored before they existed. */
  searchTerms: string | null;
  /** Read only when searchTerms is null or stale: the text to analyse again. */
  description: string | null;
  body: string | null;
  /** The frontmatter's `disable-model-invocation` as text; null when absent. */
  disableModelInvocation: string | null;
}

export interface SearchRowsPage {
  /** The catalogue revision when the page was read (every write up to it is in the page or before). */
  revision: number;
  rows: SearchRow[];
}

export interface SearchRowsDelta {
  revision: number;
  rows: SearchRow[];
  /** Skills the tag no longer points at a version of. */
  removed: string[];
}

/** What agents loaded after searching for a term (search_feedback). */
export interface FeedbackRow {
  term: string;
  skill: string;
  loads: number;
  updatedAt: Date;
}

interface RawSearchRow {
  state_revision: string;
  version_id: string | null;
  name: string | null;
  version: string | null;
  search_terms: string | null;
  description: string | null;
  body: string | null;
  flag: string | null;
}

/** Reads for the in-memory search index (src/cache/search-mirror.ts): pages, catch-ups, stored terms. */
export class SearchRepository {
  constructor(private readonly db: Db) {}

  /**
   * Every version `tag` points at, `batch` at a time in no particular order, in one snapshot: each
   * batch with the catalogue revision read in that snapshot (see readInBatches: `onBatch` must not
   * wait for another statement). Texts are read only for rows whose stored terms are missing or were
   * made by another analyzer version.
   */
  async all(
    tag: string,
    analyzer: number,
    namespace: string,
    batch: number,
    onBatch: (page: SearchRowsPage) => void | Promise<void>,
  ): Promise<void> {
    await readInBatches<RawSearchRow>(
      this.db,
      this.query(namespace, tag, analyzer, sql`inner`, sql`true`),
      batch,
      (rows) => onBatch({ revision: Number(rows[0]?.state_revision ?? 0), rows: searchRowsOf(rows) }),
    );
  }

  /** Every skill written since `revision`: its current version under `tag`, or removed. */
  async since(
    tag: string,
    revision: number,
    analyzer: number,
    namespace: string = DEFAULT_NAMESPACE,
  ): Promise<SearchRowsDelta> {
    const result = await this.db.execute(
      this.query(namespace, tag, analyzer, sql`left`, sql`${skills.changedRevision} > ${revision}`),
    );
    const raw = (result as unknown as { rows: RawSearchRow[] }).rows;
    const removed = raw.filter((row) => row.name !== null && row.version === null).map((row) => row.name!);
    return { revision: Number(raw[0]?.state_revision ?? revision), rows: searchRowsOf(raw), removed };
  }

  /** Stores counted terms made for versions that had none (or stale ones). */
  async storeTerms(terms: readonly { versionId: string; searchTerms: string }[]): Promise<void> {
    if (terms.length === 0) return;
    const values = terms.map((row) => sql`(${row.versionId}::uuid, ${row.searchTerms})`);
    await this.db.execute(sql`
      update ${skillVersions} set search_terms = made.terms
      from (values ${sql.join(values, sql`, `)}) as made(id, terms)
      where ${skillVersions.id} = made.id`);
  }

  /** Adds loads to (term, skill) pairs, creating the pairs first seen. */
  async addFeedback(increments: readonly { term: string; skill: string; loads: number }[]): Promise<void> {
    if (increments.length === 0) return;
    const values = increments.map((row) => sql`(${row.term}, ${row.skill}, ${row.loads}::int)`);
    await this.db.execute(sql`
      insert into ${searchFeedback} (term, skill, loads, updated_at)
      select term, skill, loads, now() from (values ${sql.join(values, sql`, `)}) as added(term, skill, loads)
      on conflict (term, skill) do update
        set loads = ${searchFeedback.loads} + excluded.loads, updated_at = excluded.updated_at`);
  }

  /** Pairs changed after `after` (all without it), oldest change first, at most `limit`. */
  async feedbackSince(after: Date | undefined, limit: number): Promise<FeedbackRow[]> {
    const result = await this.db.execute(sql`
      select term, skill, loads, updated_at from ${searchFeedback}
      where ${after === undefined ? sql`true` : sql`${searchFeedback.updatedAt} > ${after.toISOString()}::timestamptz`}
      order by ${searchFeedback.updatedAt} limit ${limit}`);
    const rows = (
      result as unknown as {
        rows: { term: string; skill: string; loads: number; updated_at: Date | string }[];
      }
    ).rows;
    const found = rows.map((row) => ({
      term: row.term,
      skill: row.skill,
      loads: Number(row.loads),
      updatedAt: new Date(row.updated_at),
    }));
    releaseRows(rows);
    return found;
  }

  private query(namespace: string, tag: string, analyzer: number, join: SQL, where: SQL): SQL {
    const stale = sql`(${skillVersions.searchTerms} is null or ${skillVersions.searchTerms} not like ${`${analyzer}\n%`})`;
    return withStateRevision(sql`
        select ${skillVersions.id} as version_id, ${skills.name} as name, ${skillVersions.version} as version,
          ${skillVersions.searchTerms} as search_terms,
          case when ${stale} then ${skillVersions.description} end as description,
          case when ${stale} then ${skillVersions.body} end as body,
          ${skillVersions.frontmatter} ->> 'disable-model-invocation' as flag
        from ${skills}
        ${join} join ${distTags} on ${distTags.skillId} = ${skills.id} and ${distTags.tag} = ${tag}
        left join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId}
        where ${skills.namespace} = ${namespace} and (${where})
      `);
  }
}

function searchRowsOf(raw: RawSearchRow[]): SearchRow[] {
  const rows: SearchRow[] = [];
  for (const row of raw) {
    if (row.name === null || row.version === null || row.version_id === null) continue;
    rows.push({
      versionId: row.version_id,
      name: row.name,
      version: row.version,
      searchTerms: row.search_terms,
      description: row.description,
      body: row.body,
      disableModelInvocation: row.flag,
    });
  }
  releaseRows(raw);
  return rows;
}
