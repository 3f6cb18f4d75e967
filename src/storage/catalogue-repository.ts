import { and, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { distTags, skills, skillVersions } from '../db/schema.js';
import { BadRequestError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import type { Verdict } from '../scan/types.js';
import { readInBatches } from './bulk-read.js';
import { preparedStatement } from './prepared.js';
import {
  LATEST,
  releaseRows,
  type StateRevisions,
  type StoredPromptTokens,
  withStateRevision,
} from './records.js';

export interface CatalogueItem {
  name: string;
  description: string;
  version: string;
  tags: string[];
  digest: string;
  updatedAt: Date;
  tokens: { description: number; body: number };
  /**
   * The frontmatter keys that decide who may invoke the skill (`disable-model-invocation`,
   * `user-invocable`), where set: all a listing reads of the frontmatter, whose copy of the description
   * would double what a page reads.
   */
  invocation: Record<string, unknown>;
  /** The version's scan verdict (pass or warn; block only once an admin released it); null before scanning. */
  scan: { verdict: Verdict } | null;
  /** The version's row id (for what is stored per version, such as archives). */
  versionId: string;
  /** Bytes of the version's files, uncompressed. */
  totalSize: number;
}

export interface CatalogueQuery {
  /** Default `default`. */
  namespace?: string;
  q?: string;
  tag?: string;
  limit: number;
  cursor?: string;
}

export interface AgentCatalogueQuery {
  /** Default `default`. */
  namespace?: string;
  tag?: string;
  q?: string;
  names?: readonly string[];
  /** false: descriptions are not read (empty strings); GET /tools needs the names only. */
  descriptions?: boolean;
}

/** The items of named skills, and the catalogue revision they were read at. */
export interface CatalogueItems {
  items: CatalogueItem[];
  /** registry_state.revision in the statement's snapshot; undefined when no statement was needed. */
  revision: number | undefined;
}

/** A catalogue row as the driver returns it (numbers may come as text). */
interface RawCatalogueRow {
  name: string;
  description: string;
  version: string;
  digest: string;
  updated_at: Date | string;
  tokens_description: number | string;
  tokens_body: number | string;
  invocation: Record<string, unknown>;
  tags: string[];
  scan_verdict: string | null;
  version_id: string;
  total_size: number | string;
}

/** A row of itemsOf's statement (name null: none of the names was found). */
type RawItemRow = Omit<RawCatalogueRow, 'name'> & { state_revision: string; name: string | null };

/** A row of agentCatalogue's statement, as the driver returns it. */
interface AgentCatalogueRow {
  name: string;
  description: string;
  version: string;
  digest: string;
  flag: string | null;
  scan_verdict: string | null;
  tokens_body: number;
  last_loaded_at: Date | string | null;
  /** bigint: the driver returns it as text. */
  load_count: string | number;
  prompt_xml: number | null;
  prompt_markdown: number | null;
  prompt_name: number | null;
}

/** A current version as agent-facing renderings (prompt fragment, tools) need it. */
export interface AgentCatalogueEntry {
  name: string;
  description: string;
  version: string;
  digest: string;
  /** The frontmatter's `disable-model-invocation` as text (true reads "true"); null when absent. */
  disableModelInvocation: string | null;
  /** The version's scan verdict; null for versions stored before scanning. */
  scanVerdict: string | null;
  tokens: { body: number };
  /** Last recorded layer-2 load of the skill (any version); null when never loaded. */
  lastLoadedAt: Date | null;
  /** Layer-2 loads of the skill recorded so far (any version). */
  loadCount: number;
  /** The version's stored prompt entry counts; null when it has none. */
  promptTokens: StoredPromptTokens | null;
}

/** See CatalogueRepository.agentCatalogueSince. */
export interface AgentCatalogueDelta extends StateRevisions {
  entries: AgentCatalogueEntry[];
  /** Skills the tag no longer points at a version of. */
  removed: string[];
}

/** A tagged version without stored prompt entry counts (see fillPromptTokens in src/services). */
export interface VersionWithoutPromptTokens {
  id: string;
  name: string;
  description: string;
}

/** Queries over the whole catalogue: pages, searches and the agent catalogue behind /prompt and /tools. */
export class CatalogueRepository {
  private readonly itemsStatement: (values: Record<string, unknown>) => Promise<RawItemRow[]>;
  private readonly pageStatement: (values: Record<string, unknown>) => Promise<RawCatalogueRow[]>;
  private readonly descriptionsStatement: (
    values: Record<string, unknown>,
  ) => Promise<{ name: string; description: string }[]>;

  constructor(private readonly db: Db) {
    // Driven from the few names (unique index, then the dist-tag's primary key), whatever the planner
    // knows of the tables' sizes: a search asks for ten rows of a catalogue of any size. The lateral
    // lookup keeps it so: joined plainly, ten names made PostgreSQL hash every skill of the namespace.
    // The revision comes in the same snapshot, and in a row even when no name is found.
    this.itemsStatement = preparedStatement<RawItemRow>(
      db,
      'catalogue_items_of',
      withStateRevision(sql`
        select found.name as name, ${itemColumns()}
        from ${taggedVersionsOfNames()}
      `),
    );
    this.pageStatement = preparedStatement<RawCatalogueRow>(
      db,
      'catalogue_page',
      sql`
        select ${skills.name} as name, ${itemColumns()}
        from ${distTags}
        inner join ${skills} on ${skills.id} = ${distTags.skillId}
        inner join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId}
        where ${distTags.tag} = ${sql.placeholder('tag')}::text and ${listedVersion()}
          and ${skills.namespace} = ${sql.placeholder('namespace')}::text
          and ${skills.name} > ${sql.placeholder('after')}::text
        order by ${skills.name}
        limit ${sql.placeholder('limit')}::int
      `,
    );
    // The same lookup for the descriptions alone: the shadowing check runs it at every publish.
    this.descriptionsStatement = preparedStatement(
      db,
      'catalogue_descriptions_of',
      sql`
        select found.name as name, ${skillVersions.description} as description
        from ${taggedVersionsOfNames()}
      `,
    );
  }

  /**
   * The descriptions of the versions `tag` points at for `names` in `namespace` (the listed ones: not
   * yanked or quarantined), by name: one planned statement, for the few candidates of a check.
   */
  async taggedDescriptionsOf(
    names: readonly string[],
    namespace: string = DEFAULT_NAMESPACE,
    tag: string = LATEST,
  ): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    const rows = await this.descriptionsStatement({ names, namespace, tag });
    const found = new Map(rows.map((row) => [row.name, row.description]));
    releaseRows(rows);
    return found;
  }

  /**
   * One page of the catalogue under a tag, by name (searches rank in src/services/skill-search.ts):
   * a planned statement, since every uncached page runs it and its plan never changes.
   */
  async catalogue(query: CatalogueQuery): Promise<{ items: CatalogueItem[]; nextCursor: string | null }> {
    const rows = await this.pageStatement({
      tag: query.tag ?? LATEST,
      namespace: query.namespace ?? DEFAULT_NAMESPACE,
      // Every name sorts after the empty string (names are never empty).
      after: decodeCursor(query.cursor) ?? '',
      limit: query.limit + 1,
    });
    const nextCursor = rows.length > query.limit ? encodeCatalogueCursor(rows[query.limit - 1]!.name) : null;
    return { items: rows.slice(0, query.limit).map(catalogueItemOf), nextCursor };
  }

  /** The catalogue items of the named skills under a tag, in no particular order (absent ones left out). */
  async itemsOf(
    tag: string,
    names: readonly string[],
    namespace: string = DEFAULT_NAMESPACE,
  ): Promise<CatalogueItems> {
    if (names.length === 0) return { items: [], revision: undefined };
    const rows = await this.itemsStatement({ names: [...names], namespace, tag });
    const items: CatalogueItem[] = [];
    for (const row of rows) {
      if (row.name === null) continue;
      items.push(catalogueItemOf(row as RawCatalogueRow));
    }
    const revision = rows[0] === undefined ? undefined : Number(rows[0].state_revision);
    releaseRows(rows);
    return { items, revision };
  }

  /**
   * Every current catalogue entry under a dist-tag (default latest), with what agent-facing renderings
   * need: the model-invocation flag, body tokens, how often and when the skill was loaded. Not paged
   * and not capped: GET /prompt and GET /tools list or name the whole selection, so the columns are
   * few (one frontmatter key, not the frontmatter; no description with `descriptions: false`).
   * `names` narrows to those skills; results are by name.
   */
  async agentCatalogue(query: AgentCatalogueQuery = {}): Promise<AgentCatalogueEntry[]> {
    const tag = query.tag ?? LATEST;
    if (query.names !== undefined && query.names.length === 0) return [];
    const where = and(
      eq(distTags.tag, tag),
      listedVersion(),
      eq(skills.namespace, query.namespace ?? DEFAULT_NAMESPACE),
      query.names ? inArray(skills.name, [...query.names]) : undefined,
    );
    // A plain statement rather than a select: drizzle maps rows all at once, which for a large catalogue
    // holds the event loop several times longer than the driver's own parsing.
    const result = await this.db.execute(sql`
      select ${skills.name} as name,
        ${query.descriptions === false ? sql`''` : skillVersions.description} as description,
        ${skillVersions.version} as version, ${skillVersions.digest} as digest,
        ${skillVersions.frontmatter} ->> 'disable-model-invocation' as flag,
        ${skillVersions.scanVerdict} as scan_verdict,
        ${skillVersions.tokensBody} as tokens_body, ${skills.lastLoadedAt} as last_loaded_at,
        ${skills.loadCount} as load_count,
        ${promptTokenSelection()}
      from ${distTags}
      inner join ${skills} on ${skills.id} = ${distTags.skillId}
      inner join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId}
      where ${where}
      order by ${skills.name}`);
    const rows = (result as unknown as { rows: AgentCatalogueRow[] }).rows;
    const entries = rows.map(agentEntryOf);
    releaseRows(rows);
    return entries;
  }

  /**
   * What an in-memory copy of the agent catalogue under `tag` needs to catch up (AgentCatalogueMirror):
   * without `since`, every entry; with it, only the skills written after `since.revision` or whose loads
   * were recorded after `since.loadsRevision`, each with its current entry under the tag or, when the
   * tag no longer points at a version of it (every version yanked), listed in `removed`. One statement,
   * so the revisions it answers are exactly the ones its rows reflect.
   */
  agentCatalogueSince(
    tag: string,
    since?: StateRevisions,
    namespace: string = DEFAULT_NAMESPACE,
  ): Promise<AgentCatalogueDelta> {
    const changed = since
      ? sql`${skills.namespace} = ${namespace} and (${skills.changedRevision} > ${since.revision} or ${skills.loadedRevision} > ${since.loadsRevision})`
      : sql`${skills.namespace} = ${namespace}`;
    return this.agentCatalogueRows(tag, changed, since !== undefined);
  }

  /**
   * The entries under `tag` whose names follow `after` (code point order), at most `limit`, with the
   * revisions read in the same statement: a copy of a large catalogue is first read page by page, so
   * its rows are never all in memory at once (AgentCatalogueMirror catches up from the first page's
   * revisions, which covers whatever was written while the pages were read).
   */
  /**
   * Every entry `tag` points at a version of, `batch` at a time in no particular order, in one
   * snapshot: each batch with the revisions read in that snapshot (see readInBatches: `onBatch` must
   * not wait for another statement).
   */
  async agentCatalogueAll(
    tag: string,
    namespace: string,
    batch: number,
    onBatch: (page: StateRevisions & { entries: AgentCatalogueEntry[] }) => void | Promise<void>,
  ): Promise<void> {
    const query = this.agentCatalogueQuery(tag, sql`${skills.namespace} = ${namespace}`, false);
    await readInBatches<AgentCatalogueRawRow>(this.db, query, batch, (rows) =>
      onBatch(agentCatalogueOf(rows)),
    );
  }

  private async agentCatalogueRows(
    tag: string,
    where: SQL,
    removedToo: boolean,
  ): Promise<AgentCatalogueDelta> {
    const result = await this.db.execute(this.agentCatalogueQuery(tag, where, removedToo));
    return agentCatalogueOf((result as unknown as { rows: AgentCatalogueRawRow[] }).rows);
  }

  /**
   * The copy's rows (AgentCatalogueMirror): the description and digest only of versions without stored
   * prompt counts ('' otherwise), which is all the copy keeps of them; a million descriptions read
   * only to be dropped were most of what its first read carried.
   */
  private agentCatalogueQuery(tag: string, where: SQL, removedToo: boolean): SQL {
    const counted = sql`(${skillVersions.tokensPromptXml} is not null and ${skillVersions.tokensPromptMarkdown} is not null and ${skillVersions.tokensPromptName} is not null)`;
    return withStateRevision(sql`
      select ${skills.name} as name,
        case when ${counted} then '' else ${skillVersions.description} end as description,
        ${skillVersions.version} as version,
        case when ${counted} then '' else ${skillVersions.digest} end as digest,
        ${skillVersions.frontmatter} ->> 'disable-model-invocation' as flag,
        ${skillVersions.scanVerdict} as scan_verdict,
        ${skillVersions.tokensBody} as tokens_body, ${skills.lastLoadedAt} as last_loaded_at,
        ${skills.loadCount} as load_count,
        ${promptTokenSelection()}
      from ${skills}
      ${removedToo ? sql`left` : sql`inner`} join ${distTags}
        on ${distTags.skillId} = ${skills.id} and ${distTags.tag} = ${tag}
      left join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId} and ${listedVersion()}
      where ${where}
    `);
  }

  /** The descriptions of the given versions, by skill name (one version per name). */
  async descriptionsOf(
    versions: readonly { name: string; version: string }[],
    namespace: string = DEFAULT_NAMESPACE,
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    // 2,000 pairs are 4,000 parameters, well under PostgreSQL's 65,535 per statement.
    for (let start = 0; start < versions.length; start += 2000) {
      const wanted = sql.join(
        versions.slice(start, start + 2000).map(({ name, version }) => sql`(${name}, ${version})`),
        sql`, `,
      );
      const result = await this.db.execute(sql`
        select wanted.name as name, ${skillVersions.description} as description
        from (values ${wanted}) as wanted(name, version)
        inner join ${skills} on ${skills.namespace} = ${namespace} and ${skills.name} = wanted.name
        inner join ${skillVersions}
          on ${skillVersions.skillId} = ${skills.id} and ${skillVersions.version} = wanted.version`);
      const rows = (result as unknown as { rows: { name: string; description: string }[] }).rows;
      for (const row of rows) found.set(row.name, row.description);
      releaseRows(rows);
    }
    return found;
  }

  /** Tagged versions without stored prompt entry counts, by id after `after`, `limit` at a time. */
  async versionsWithoutPromptTokens(after: string, limit: number): Promise<VersionWithoutPromptTokens[]> {
    return this.db
      .select({ id: skillVersions.id, name: skillVersions.name, description: skillVersions.description })
      .from(skillVersions)
      .where(
        and(
          isNull(skillVersions.tokensPromptName),
          sql`${skillVersions.id} > ${after}`,
          sql`exists (select 1 from ${distTags} where ${distTags.versionId} = ${skillVersions.id})`,
        ),
      )
      .orderBy(skillVersions.id)
      .limit(limit);
  }

  async storePromptTokens(counted: readonly ({ id: string } & StoredPromptTokens)[]): Promise<void> {
    if (counted.length === 0) return;
    const values = counted.map(
      (row) => sql`(${row.id}::uuid, ${row.xml}::int, ${row.markdown}::int, ${row.listed}::int)`,
    );
    await this.db.execute(sql`
      update ${skillVersions} set tokens_prompt_xml = counted.xml,
        tokens_prompt_markdown = counted.markdown, tokens_prompt_name = counted.listed
      from (values ${sql.join(values, sql`, `)}) as counted(id, xml, markdown, listed)
      where ${skillVersions.id} = counted.id`);
  }
}

function agentEntryOf(row: AgentCatalogueRow): AgentCatalogueEntry {
  return {
    name: row.name,
    description: row.description,
    version: row.version,
    digest: row.digest,
    disableModelInvocation: row.flag,
    scanVerdict: row.scan_verdict,
    tokens: { body: Number(row.tokens_body) },
    lastLoadedAt: row.last_loaded_at === null ? null : new Date(row.last_loaded_at),
    loadCount: Number(row.load_count),
    promptTokens:
      row.prompt_xml === null || row.prompt_markdown === null || row.prompt_name === null
        ? null
        : { xml: row.prompt_xml, markdown: row.prompt_markdown, listed: row.prompt_name },
  };
}

function promptTokenSelection(): SQL {
  return sql`${skillVersions.tokensPromptXml} as prompt_xml,
    ${skillVersions.tokensPromptMarkdown} as prompt_markdown, ${skillVersions.tokensPromptName} as prompt_name`;
}

/**
 * The listed versions `tag` points at for the placeholder `names` in the placeholder `namespace`, as
 * `found` (name) joined with their dist-tag and version rows: driven from the few names (see the
 * constructor of CatalogueRepository).
 */
function taggedVersionsOfNames(): SQL {
  return sql`unnest(${sql.placeholder('names')}::text[]) as wanted(name)
        cross join lateral (
          select ${skills.id} as id, ${skills.name} as name from ${skills}
          where ${skills.namespace} = ${sql.placeholder('namespace')}::text and ${skills.name} = wanted.name limit 1
        ) as found
        inner join ${distTags} on ${distTags.skillId} = found.id and ${distTags.tag} = ${sql.placeholder('tag')}::text
        inner join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId} and ${listedVersion()}`;
}

/**
 * Which tagged version is listed at all, on every face: neither yanked nor in quarantine. Yanks,
 * quarantine and a blocking rescan take the tags off already; this keeps a listing right even if a
 * tag was left behind (a write interrupted between the two, a bulk import). Not the scan verdict: a
 * version an admin released keeps its `block` verdict and is listed like any other (CONTRACT.md).
 */
export function listedVersion(): SQL {
  return sql`(${skillVersions.yankedAt} is null and ${skillVersions.quarantine} is null)`;
}

/** A catalogue page's cursor: the page continues after the name `after`. */
export function encodeCatalogueCursor(after: string): string {
  return Buffer.from(JSON.stringify({ after })).toString('base64url');
}

function decodeCursor(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof cursor.after === 'string') return cursor.after;
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError(
    'cursor is not one this registry issued for this query; pass the nextCursor value of the previous page unchanged, with the same q',
    { parameter: 'cursor' },
  );
}

/**
 * The dist-tags on a catalogue row's version, read through the skill's own tags (the primary key's
 * leaf the join to the tag just read) rather than an index by version elsewhere in the table. As
 * JSON: the driver parses a text array character by character, into several objects per tag.
 */
function tagsOfVersion(): SQL<string[]> {
  return sql<string[]>`array_to_json(array(
    select t2.tag from ${distTags} t2
    where t2.skill_id = ${skillVersions.skillId} and t2.version_id = ${skillVersions.id} order by t2.tag
  ))`;
}

/** CatalogueItem.invocation: the frontmatter's invocation keys that are set. */
function invocationKeys(): SQL {
  return sql`jsonb_strip_nulls(jsonb_build_object(
    'disable-model-invocation', ${skillVersions.frontmatter} -> 'disable-model-invocation',
    'user-invocable', ${skillVersions.frontmatter} -> 'user-invocable'
  ))`;
}

/** The columns of a catalogue item after the name (RawCatalogueRow), for the statements that read items. */
function itemColumns(): SQL {
  return sql`${skillVersions.description} as description,
    ${skillVersions.version} as version, ${skillVersions.digest} as digest,
    ${distTags.updatedAt} as updated_at, ${skillVersions.tokensDescription} as tokens_description,
    ${skillVersions.tokensBody} as tokens_body, ${invocationKeys()} as invocation,
    ${skillVersions.scanVerdict} as scan_verdict, ${tagsOfVersion()} as tags,
    ${skillVersions.id} as version_id, ${skillVersions.totalSize} as total_size`;
}

function catalogueItemOf(row: RawCatalogueRow): CatalogueItem {
  return {
    name: row.name,
    description: row.description,
    version: row.version,
    tags: row.tags,
    digest: row.digest,
    updatedAt: new Date(row.updated_at),
    tokens: { description: Number(row.tokens_description), body: Number(row.tokens_body) },
    invocation: row.invocation,
    scan: row.scan_verdict === null ? null : { verdict: row.scan_verdict as Verdict },
    versionId: row.version_id,
    totalSize: Number(row.total_size),
  };
}

type AgentCatalogueRawRow = Partial<AgentCatalogueRow> & {
  state_revision: string;
  state_loads_revision: string;
};

/** Entries and removed names of agent catalogue rows, with the revisions read with them; lets the rows go. */
function agentCatalogueOf(rows: AgentCatalogueRawRow[]): AgentCatalogueDelta {
  const entries: AgentCatalogueEntry[] = [];
  const removed: string[] = [];
  for (const row of rows) {
    if (row.name == null) continue; // the state row alone: nothing changed
    if (row.version == null) {
      removed.push(row.name);
      continue;
    }
    entries.push(agentEntryOf(row as AgentCatalogueRow));
  }
  const [first] = rows;
  const revisions = {
    revision: Number(first?.state_revision ?? 0),
    loadsRevision: Number(first?.state_loads_revision ?? 0),
  };
  releaseRows(rows);
  return { ...revisions, entries, removed };
}
