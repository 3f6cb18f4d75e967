import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { and, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { writeTarGz, writeZip } from '../bundle/archive-write.js';
import { fileDigest } from '../bundle/digest.js';
import type { BundleFile, BundleIssue, ParsedSkill } from '../bundle/types.js';
import { chooseVersion, pickLatest, sortVersionsDescending } from '../bundle/version.js';
import { CHANGES_CHANNEL } from '../cache/change-feed.js';
import type { Db } from '../db/client.js';
import {
  blobs,
  distTags,
  registryState,
  skills,
  skillVersions,
  versionArchives,
  versionFiles,
} from '../db/schema.js';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import { type PromptEntryTokens, promptEntryTokens } from '../render/prompt.js';
import { countCatalogueEntryTokens, countTokens } from '../render/token-count.js';
import { recordAudit } from './audit-repository.js';

export const LATEST = 'latest';

export type ArchiveFormat = 'tar.gz' | 'zip';

/**
 * The archive every publish builds and stores with the version, in the same transaction: the format
 * the discovery index points at (src/http/routes/well-known.ts), so the index never builds archives
 * except for versions published before archives were built at publish time. tar.gz bundles stay lazy.
 */
export const PUBLISH_ARCHIVE_FORMAT: ArchiveFormat = 'zip';

/** Stragglers built per batch: at most this many versions, and this many bytes of files loaded at once. */
const ARCHIVE_BATCH_VERSIONS = 100;
const ARCHIVE_BATCH_BYTES = 16 * 1024 * 1024;

/** How a read names the version it wants: an exact version, a dist-tag, or neither (latest). */
export interface VersionSelector {
  version?: string;
  tag?: string;
}

export interface PublishInput {
  skill: ParsedSkill;
  files: BundleFile[];
  digest: string;
  requestedVersion?: string;
  /** Dist-tag to point at the published version (besides the automatic `latest`). */
  tag?: string;
  actor: string;
}

export interface PublishResult {
  name: string;
  version: string;
  digest: string;
  created: boolean;
  warnings: BundleIssue[];
}

/** One stored version, as reads need it. */
export interface VersionRecord {
  id: string;
  skillId: string;
  name: string;
  version: string;
  digest: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  createdAt: Date;
  yankedAt: Date | null;
  tokensDescription: number;
  tokensBody: number;
  totalSize: number;
  fileCount: number;
}

export interface CatalogueItem {
  name: string;
  description: string;
  version: string;
  tags: string[];
  digest: string;
  updatedAt: Date;
  tokens: { description: number; body: number };
  frontmatter: Record<string, unknown>;
}

export interface CatalogueQuery {
  q?: string;
  tag?: string;
  limit: number;
  cursor?: string;
}

export interface AgentCatalogueQuery {
  tag?: string;
  q?: string;
  names?: readonly string[];
  /** false: descriptions are not read (empty strings); GET /tools needs the names only. */
  descriptions?: boolean;
}

/** A row of agentCatalogue's statement, as the driver returns it. */
interface AgentCatalogueRow {
  name: string;
  description: string;
  version: string;
  digest: string;
  flag: string | null;
  tokens_body: number;
  last_loaded_at: Date | string | null;
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
  tokens: { body: number };
  /** Last recorded layer-2 load of the skill (any version); null when never loaded. */
  lastLoadedAt: Date | null;
  /** The version's stored prompt entry counts; null when it has none (see render/prompt.ts). */
  promptTokens: PromptEntryTokens | null;
}

/** The catalogue and loads revisions a read reflects. */
export interface StateRevisions {
  revision: number;
  loadsRevision: number;
}

/** See SkillsRepository.agentCatalogueSince. */
export interface AgentCatalogueDelta extends StateRevisions {
  entries: AgentCatalogueEntry[];
  /** Skills the tag no longer points at a version of. */
  removed: string[];
}

function agentEntryOf(row: AgentCatalogueRow): AgentCatalogueEntry {
  return {
    name: row.name,
    description: row.description,
    version: row.version,
    digest: row.digest,
    disableModelInvocation: row.flag,
    tokens: { body: Number(row.tokens_body) },
    lastLoadedAt: row.last_loaded_at === null ? null : new Date(row.last_loaded_at),
    promptTokens:
      row.prompt_xml === null || row.prompt_markdown === null || row.prompt_name === null
        ? null
        : { xml: row.prompt_xml, markdown: row.prompt_markdown, listed: row.prompt_name },
  };
}

/**
 * Empties a large result's row array once it has been read. node-postgres can keep the result of
 * the query that opened a pooled connection reachable for as long as the connection lives (a closure
 * of the connection's event handlers shares a scope with that query's promise): at 100,000 skills,
 * 60 MB of rows that nobody reads again.
 */
function releaseRows(rows: unknown[]): void {
  rows.length = 0;
}

function promptTokenSelection(): SQL {
  return sql`${skillVersions.tokensPromptXml} as prompt_xml,
    ${skillVersions.tokensPromptMarkdown} as prompt_markdown, ${skillVersions.tokensPromptName} as prompt_name`;
}

/** The stored prompt entry counts of a new version (null columns when its entry is counted whole). */
export function promptTokenColumns(name: string, description: string) {
  const counts = promptEntryTokens(name, description);
  return {
    tokensPromptXml: counts?.xml ?? null,
    tokensPromptMarkdown: counts?.markdown ?? null,
    tokensPromptName: counts?.listed ?? null,
  };
}

export interface VersionSummary {
  version: string;
  digest: string;
  createdAt: Date;
  yanked: boolean;
  tags: string[];
}

/** A current version as the discovery index lists it. */
export interface CurrentArchive {
  versionId: string;
  name: string;
  description: string;
  version: string;
  /** Bytes of the version's files, uncompressed: what building its archive holds in memory. */
  totalSize: number;
  /** Hex sha256 of the stored archive; null until the archive is first built. */
  archiveSha256: string | null;
}

export interface FileEntry {
  path: string;
  size: number;
  digest: string;
  mode: number;
}

const versionColumns = {
  id: skillVersions.id,
  skillId: skillVersions.skillId,
  name: skillVersions.name,
  version: skillVersions.version,
  digest: skillVersions.digest,
  description: skillVersions.description,
  frontmatter: skillVersions.frontmatter,
  body: skillVersions.body,
  createdAt: skillVersions.createdAt,
  yankedAt: skillVersions.yankedAt,
  tokensDescription: skillVersions.tokensDescription,
  tokensBody: skillVersions.tokensBody,
  totalSize: skillVersions.totalSize,
  fileCount: skillVersions.fileCount,
};

/** A committed write that changed what readers see: the revision it produced and the skill it changed. */
export interface CatalogueChange {
  revision: number;
  skill?: string;
}

/** Transactions whose revision bump ran, with what it produced; read once the transaction commits. */
const bumpedRevisions = new WeakMap<object, CatalogueChange>();

/** Stores and reads skills. Every write is one transaction that also bumps the registry revision. */
export class SkillsRepository {
  private readonly changeListeners: ((change: CatalogueChange) => void)[] = [];

  constructor(private readonly db: Db) {}

  /** The catalogue revision: any write that changes what readers see increases it. */
  async revision(): Promise<number> {
    return (await this.state()).revision;
  }

  /** The registry_state row: catalogue revision and loads revision, one primary-key read. */
  async state(): Promise<{ revision: number; loadsRevision: number }> {
    const [row] = await this.db
      .select({ revision: registryState.revision, loadsRevision: registryState.loadsRevision })
      .from(registryState)
      .where(eq(registryState.id, 1));
    return { revision: Number(row?.revision ?? 0), loadsRevision: Number(row?.loadsRevision ?? 0) };
  }

  /**
   * Calls `listener` right after each write transaction of this repository commits, before the write
   * returns: the read cache of this process learns of its own writes without waiting for NOTIFY.
   */
  onChange(listener: (change: CatalogueChange) => void): void {
    this.changeListeners.push(listener);
  }

  /** A write transaction: when it bumped the revision, listeners hear of it once it has committed. */
  private async writeTransaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    let handle: object | undefined;
    const result = await this.db.transaction(async (tx) => {
      handle = tx;
      return work(tx as unknown as Db);
    });
    const change = handle && bumpedRevisions.get(handle);
    if (change) for (const listener of this.changeListeners) listener(change);
    return result;
  }

  async publish(input: PublishInput): Promise<PublishResult> {
    const { skill, digest } = input;
    return this.writeTransaction(async (tx) => {
      // Serialises publishes of one skill across every replica, even before its row exists.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill:${skill.name}`}))`);
      const skillId = await upsertSkill(tx, skill.name);
      const existing = await tx
        .select({
          version: skillVersions.version,
          digest: skillVersions.digest,
          yankedAt: skillVersions.yankedAt,
        })
        .from(skillVersions)
        .where(eq(skillVersions.skillId, skillId));

      const choice = chooseVersion({
        requested: input.requestedVersion,
        metadataVersion: skill.metadataVersion,
        existing: existing.map((row) => row.version),
      });
      const warnings = [...skill.warnings, ...choice.warnings];
      const unchanged = findIdenticalVersion(existing, digest, choice);
      if (unchanged) {
        if (unchanged.yankedAt) {
          warnings.push({
            path: 'SKILL.md',
            detail: `this content is identical to yanked version ${unchanged.version}; nothing was published. Change the skill to publish a new version`,
          });
        }
        if (input.tag && input.tag !== LATEST && !unchanged.yankedAt) {
          const previous = await this.pointTag(
            tx,
            skillId,
            skill.name,
            input.tag,
            unchanged.version,
            input.actor,
          );
          // A moved tag changes what readers see, so listings must not answer 304 to their old ETags.
          if (previous !== unchanged.version) await touchSkillAndRevision(tx, skillId);
        }
        return { name: skill.name, version: unchanged.version, digest, created: false, warnings };
      }
      const clash = existing.find((row) => row.version === choice.version);
      if (clash) {
        throw new ConflictError(
          `version ${choice.version} of '${skill.name}' already exists with different content (${clash.digest}); versions are immutable: publish under a new version (bump metadata.version or pass ?version=), or omit the version to get the next patch`,
          { name: skill.name, version: choice.version, existingDigest: clash.digest, digest },
        );
      }

      // Compression runs on libuv's thread pool while the version row is inserted.
      const archive = buildArchive(input.files, PUBLISH_ARCHIVE_FORMAT);
      archive.catch(() => {}); // awaited in insertVersion; never an unhandled rejection meanwhile
      const versionId = await insertVersion(tx, skillId, choice.version, input, archive);
      await refreshLatest(tx, skillId);
      if (input.tag) await this.pointTag(tx, skillId, skill.name, input.tag, choice.version, input.actor);
      await recordAudit(tx, {
        actor: input.actor,
        action: 'publish',
        skill: skill.name,
        version: choice.version,
        detail: { digest, versionSource: choice.source, files: input.files.length, versionId },
      });
      await touchSkillAndRevision(tx, skillId);
      return { name: skill.name, version: choice.version, digest, created: true, warnings };
    });
  }

  /** Resolves a selector to one stored version, or throws a 404 that says what exists. */
  async resolve(name: string, selector: VersionSelector = {}): Promise<VersionRecord> {
    const [skillRow] = await this.db.select({ id: skills.id }).from(skills).where(eq(skills.name, name));
    if (!skillRow) throw await this.unknownSkill(name);
    if (selector.version !== undefined) {
      const [row] = await this.db
        .select(versionColumns)
        .from(skillVersions)
        .where(and(eq(skillVersions.skillId, skillRow.id), eq(skillVersions.version, selector.version)));
      if (!row) {
        const versions = await this.versionNames(skillRow.id);
        throw unknownVersion(name, selector.version, versions);
      }
      return row;
    }
    const tag = selector.tag ?? LATEST;
    const [row] = await this.db
      .select(versionColumns)
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(and(eq(distTags.skillId, skillRow.id), eq(distTags.tag, tag)));
    if (!row) {
      const tags = await this.tagNames(skillRow.id);
      const detail =
        tag === LATEST && tags.length === 0
          ? `skill '${name}' has no current version: every version is yanked. Read one by exact version (?version=) or publish a new one`
          : `skill '${name}' has no dist-tag '${tag}'; its tags are: ${tags.join(', ') || 'none'}`;
      throw new NotFoundError(detail, { name, tag, availableTags: tags });
    }
    return row;
  }

  async catalogue(query: CatalogueQuery): Promise<{ items: CatalogueItem[]; nextCursor: string | null }> {
    const tag = query.tag ?? LATEST;
    const q = query.q?.trim() || undefined;
    const cursor = decodeCursor(query.cursor, q !== undefined);
    const searchCondition = q ? searchMatches(q) : sql`true`;
    const tagsOfVersion = sql<
      string[]
    >`coalesce((select array_agg(t2.tag order by t2.tag) from ${distTags} t2 where t2.version_id = ${skillVersions.id}), '{}')`;
    const base = this.db
      .select(catalogueColumns(tagsOfVersion))
      .from(distTags)
      .innerJoin(skills, eq(skills.id, distTags.skillId))
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId));

    let rows: Awaited<typeof base>;
    let nextCursor: string | null = null;
    if (q) {
      const offset = cursor.offset ?? 0;
      // Two steps: rank the matching versions that the tag points at (the GIN indexes find them; only
      // their id, name and search vector are read), then fetch the page's rows. A version's name is its
      // skill's name, so the ranking needs no join.
      const hits = this.db.$with('hits').as(
        this.db
          .select({
            id: skillVersions.id,
            hitName: sql<string>`${skillVersions.name}`.as('hit_name'),
            rank: sql<number>`${searchRank(q)}`.as('rank'),
          })
          .from(skillVersions)
          .where(
            and(
              searchCondition,
              // A probe of the (version_id, tag) index per match, written as a scalar subquery so the
              // planner cannot turn it into a hash of every version the tag points at (37 ms at
              // 100,000 skills, more than ranking the matches of a broad word).
              sql`(select true from ${distTags} d where d.version_id = ${skillVersions.id} and d.tag = ${tag} limit 1)`,
            ),
          )
          .orderBy(sql`rank desc`, skillVersions.name)
          .limit(query.limit + 1)
          .offset(offset),
      );
      rows = await this.db
        .with(hits)
        .select(catalogueColumns(tagsOfVersion))
        .from(hits)
        .innerJoin(skillVersions, eq(skillVersions.id, hits.id))
        .innerJoin(distTags, and(eq(distTags.versionId, skillVersions.id), eq(distTags.tag, tag)))
        .innerJoin(skills, eq(skills.id, distTags.skillId))
        .orderBy(sql`${hits.rank} desc`, hits.hitName);
      if (rows.length > query.limit) nextCursor = encodeCursor({ offset: offset + query.limit });
    } else {
      const after = cursor.after;
      rows = await base
        .where(and(eq(distTags.tag, tag), after === undefined ? sql`true` : sql`${skills.name} > ${after}`))
        .orderBy(skills.name)
        .limit(query.limit + 1);
      if (rows.length > query.limit) nextCursor = encodeCursor({ after: rows[query.limit - 1]!.name });
    }
    const items = rows.slice(0, query.limit).map((row) => ({
      name: row.name,
      description: row.description,
      version: row.version,
      tags: row.tags,
      digest: row.digest,
      updatedAt: new Date(row.updatedAt),
      tokens: { description: row.tokensDescription, body: row.tokensBody },
      frontmatter: row.frontmatter,
    }));
    return { items, nextCursor };
  }

  /**
   * Every current catalogue entry under a dist-tag (default latest), with what agent-facing renderings
   * need: the model-invocation flag, body tokens and when the skill was last loaded. Not paged and not
   * capped: GET /prompt and GET /tools list or name the whole selection, so the columns are few (one
   * frontmatter key, not the frontmatter; no description with `descriptions: false`). `names` narrows
   * to those skills, `q` searches like catalogue(); results are by name, or most relevant first with `q`.
   */
  async agentCatalogue(query: AgentCatalogueQuery = {}): Promise<AgentCatalogueEntry[]> {
    const tag = query.tag ?? LATEST;
    const q = query.q?.trim() || undefined;
    if (query.names !== undefined && query.names.length === 0) return [];
    const where = and(
      eq(distTags.tag, tag),
      query.names ? inArray(skills.name, [...query.names]) : undefined,
      q ? searchMatches(q) : undefined,
    );
    // A plain statement rather than a select: drizzle maps rows all at once, which at 100,000 rows
    // holds the event loop several times longer than the driver's own parsing.
    const result = await this.db.execute(sql`
      select ${skills.name} as name,
        ${query.descriptions === false ? sql`''` : skillVersions.description} as description,
        ${skillVersions.version} as version, ${skillVersions.digest} as digest,
        ${skillVersions.frontmatter} ->> 'disable-model-invocation' as flag,
        ${skillVersions.tokensBody} as tokens_body, ${skills.lastLoadedAt} as last_loaded_at,
        ${promptTokenSelection()}
      from ${distTags}
      inner join ${skills} on ${skills.id} = ${distTags.skillId}
      inner join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId}
      where ${where}
      order by ${q ? sql`${searchRank(q)} desc, ${skills.name}` : skills.name}`);
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
  async agentCatalogueSince(tag: string, since?: StateRevisions): Promise<AgentCatalogueDelta> {
    const changed = since
      ? sql`${skills.changedRevision} > ${since.revision} or ${skills.loadedRevision} > ${since.loadsRevision}`
      : sql`true`;
    const result = await this.db.execute(sql`
      with state as (
        select ${registryState.revision} as revision, ${registryState.loadsRevision} as loads_revision
        from ${registryState} where ${registryState.id} = 1
      )
      select state.revision::text as state_revision, state.loads_revision::text as state_loads_revision, e.*
      from state left join lateral (
        select ${skills.name} as name, ${skillVersions.description} as description,
          ${skillVersions.version} as version, ${skillVersions.digest} as digest,
          ${skillVersions.frontmatter} ->> 'disable-model-invocation' as flag,
          ${skillVersions.tokensBody} as tokens_body, ${skills.lastLoadedAt} as last_loaded_at,
          ${promptTokenSelection()}
        from ${skills}
        ${since ? sql`left` : sql`inner`} join ${distTags}
          on ${distTags.skillId} = ${skills.id} and ${distTags.tag} = ${tag}
        left join ${skillVersions} on ${skillVersions.id} = ${distTags.versionId}
        where ${changed}
      ) e on true`);
    const rows = (
      result as unknown as {
        rows: (Partial<AgentCatalogueRow> & { state_revision: string; state_loads_revision: string })[];
      }
    ).rows;
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

  /** The descriptions of the given versions, by skill name (one version per name). */
  async descriptionsOf(versions: readonly { name: string; version: string }[]): Promise<Map<string, string>> {
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
        inner join ${skills} on ${skills.name} = wanted.name
        inner join ${skillVersions}
          on ${skillVersions.skillId} = ${skills.id} and ${skillVersions.version} = wanted.version`);
      const rows = (result as unknown as { rows: { name: string; description: string }[] }).rows;
      for (const row of rows) found.set(row.name, row.description);
      releaseRows(rows);
    }
    return found;
  }

  /**
   * Changes whenever recorded loads are written. Load counts do not bump the catalogue revision (reads
   * must not write it), so renderings ordered by recency of use add this to their ETag.
   */
  async loadsFingerprint(): Promise<string> {
    return String((await this.state()).loadsRevision);
  }

  async files(versionId: string): Promise<FileEntry[]> {
    return this.db
      .select({
        path: versionFiles.path,
        size: versionFiles.size,
        digest: versionFiles.blobDigest,
        mode: versionFiles.mode,
      })
      .from(versionFiles)
      .where(eq(versionFiles.versionId, versionId))
      .orderBy(versionFiles.path);
  }

  /** One file's bytes, or a 404 naming the files the version has. */
  async readFile(version: VersionRecord, path: string): Promise<{ bytes: Uint8Array; digest: string }> {
    const [row] = await this.db
      .select({ content: blobs.content, digest: blobs.digest })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(and(eq(versionFiles.versionId, version.id), eq(versionFiles.path, path)));
    if (!row) {
      const paths = (await this.files(version.id)).map((file) => file.path);
      throw new NotFoundError(
        `skill '${version.name}' version ${version.version} has no file '${path}'; its files are: ${paths.slice(0, 50).join(', ')}${paths.length > 50 ? ', ...' : ''}`,
        { name: version.name, version: version.version, path, files: paths.slice(0, 200) },
      );
    }
    return { bytes: row.content, digest: row.digest };
  }

  /** Every file of a version with its bytes, for bundles. */
  async bundleFiles(versionId: string): Promise<BundleFile[]> {
    const rows = await this.db
      .select({ path: versionFiles.path, mode: versionFiles.mode, content: blobs.content })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(eq(versionFiles.versionId, versionId))
      .orderBy(versionFiles.path);
    return rows.map((row) => ({ path: row.path, bytes: row.content, mode: row.mode }));
  }

  /**
   * The archive of a version, built on first request and stored, so every replica serves the same
   * bytes and the digest in the discovery index stays true. Concurrent first requests race harmlessly:
   * the first stored archive wins and everyone answers with it.
   */
  async archive(
    version: Pick<VersionRecord, 'id'>,
    format: ArchiveFormat,
  ): Promise<{ bytes: Uint8Array; sha256: string }> {
    const stored = await this.storedArchive(version.id, format);
    if (stored) return stored;
    const { bytes, sha256: digest } = await buildArchive(await this.bundleFiles(version.id), format);
    await this.db.transaction(async (tx) => {
      await tx.insert(blobs).values({ digest, size: bytes.byteLength, content: bytes }).onConflictDoNothing();
      await tx
        .insert(versionArchives)
        .values({ versionId: version.id, format, blobDigest: digest })
        .onConflictDoNothing();
    });
    return (await this.storedArchive(version.id, format)) ?? { bytes, sha256: digest };
  }

  /**
   * Builds and stores the missing archives of many versions (the stragglers published before publishes
   * built them) and answers the sha256 of each version's stored archive. Works in bounded batches (at
   * most ARCHIVE_BATCH_VERSIONS versions and about ARCHIVE_BATCH_BYTES of files in memory): one query
   * loads a batch's files, one transaction stores its archives, and the event loop gets a turn between
   * batches, so thousands of stragglers never hold more than one connection or a batch of memory.
   * Versions whose archive exists by then (another request or replica built it) are not built again.
   */
  async buildArchives(
    versions: readonly Pick<CurrentArchive, 'versionId' | 'totalSize'>[],
    format: ArchiveFormat,
  ): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    for (const batch of archiveBatches(versions)) {
      const ids = batch.map((entry) => entry.versionId);
      const existing = await this.storedArchiveDigests(ids, format);
      for (const [id, sha256] of existing) digests.set(id, sha256);
      const todo = ids.filter((id) => !existing.has(id));
      if (todo.length > 0) {
        const rows = await this.db
          .select({
            versionId: versionFiles.versionId,
            path: versionFiles.path,
            mode: versionFiles.mode,
            content: blobs.content,
          })
          .from(versionFiles)
          .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
          .where(inArray(versionFiles.versionId, todo));
        const filesOf = new Map<string, BundleFile[]>(todo.map((id) => [id, []]));
        for (const row of rows)
          filesOf.get(row.versionId)?.push({ path: row.path, bytes: row.content, mode: row.mode });
        const built = await Promise.all(
          todo.map(async (versionId) => ({
            versionId,
            ...(await buildArchive(filesOf.get(versionId)!, format)),
          })),
        );
        await this.db.transaction(async (tx) => {
          await storeArchives(tx, built, format);
        });
        // What is stored wins: a concurrent builder may have stored its archive first.
        for (const [id, sha256] of await this.storedArchiveDigests(todo, format)) digests.set(id, sha256);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return digests;
  }

  private async storedArchiveDigests(
    versionIds: string[],
    format: ArchiveFormat,
  ): Promise<Map<string, string>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.db
      .select({ versionId: versionArchives.versionId, digest: versionArchives.blobDigest })
      .from(versionArchives)
      .where(and(inArray(versionArchives.versionId, versionIds), eq(versionArchives.format, format)));
    return new Map(rows.map((row) => [row.versionId, row.digest]));
  }

  /**
   * Every current skill (its `latest` version, never yanked) with the sha256 of its stored archive in
   * `format`, or null when that archive has not been built yet. Bodies are not loaded: this backs the
   * discovery index, which must stay cheap however many skills there are.
   */
  /**
   * Stores the prompt entry counts of tagged versions that have none (stored before the counts
   * existed), `batch` at a time, giving the event loop a turn after each batch. Answers how many
   * versions got counts. Names whose entries are counted whole keep none and are not asked for again.
   */
  async fillPromptTokens(batch = 100): Promise<number> {
    let filled = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await this.db
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
        .limit(batch);
      if (rows.length === 0) return filled;
      after = rows.at(-1)!.id;
      const counted = rows.flatMap((row) => {
        const counts = promptEntryTokens(row.name, row.description);
        return counts
          ? [sql`(${row.id}::uuid, ${counts.xml}::int, ${counts.markdown}::int, ${counts.listed}::int)`]
          : [];
      });
      if (counted.length > 0) {
        await this.db.execute(sql`
          update ${skillVersions} set tokens_prompt_xml = counted.xml,
            tokens_prompt_markdown = counted.markdown, tokens_prompt_name = counted.listed
          from (values ${sql.join(counted, sql`, `)}) as counted(id, xml, markdown, listed)
          where ${skillVersions.id} = counted.id`);
        filled += counted.length;
      }
      await yieldToEventLoop();
    }
  }

  /** Current versions without a stored archive in `format` (what a backfill builds); cheap when none. */
  async missingArchives(format: ArchiveFormat): Promise<Pick<CurrentArchive, 'versionId' | 'totalSize'>[]> {
    return this.db
      .select({ versionId: skillVersions.id, totalSize: skillVersions.totalSize })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .leftJoin(
        versionArchives,
        and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, format)),
      )
      .where(
        and(eq(distTags.tag, LATEST), isNull(skillVersions.yankedAt), isNull(versionArchives.versionId)),
      );
  }

  async currentArchives(format: ArchiveFormat): Promise<CurrentArchive[]> {
    const rows = await this.db
      .select({
        versionId: skillVersions.id,
        name: skills.name,
        description: skillVersions.description,
        version: skillVersions.version,
        totalSize: skillVersions.totalSize,
        archiveSha256: versionArchives.blobDigest,
      })
      .from(distTags)
      .innerJoin(skills, eq(skills.id, distTags.skillId))
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .leftJoin(
        versionArchives,
        and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, format)),
      )
      .where(and(eq(distTags.tag, LATEST), isNull(skillVersions.yankedAt)))
      .orderBy(skills.name);
    return rows;
  }

  private async storedArchive(versionId: string, format: ArchiveFormat) {
    const [row] = await this.db
      .select({ content: blobs.content, digest: blobs.digest })
      .from(versionArchives)
      .innerJoin(blobs, eq(blobs.digest, versionArchives.blobDigest))
      .where(and(eq(versionArchives.versionId, versionId), eq(versionArchives.format, format)));
    return row ? { bytes: row.content, sha256: row.digest } : undefined;
  }

  async versions(name: string): Promise<VersionSummary[]> {
    const skillId = await this.skillId(name);
    const rows = await this.db
      .select({
        version: skillVersions.version,
        digest: skillVersions.digest,
        createdAt: skillVersions.createdAt,
        yankedAt: skillVersions.yankedAt,
        id: skillVersions.id,
      })
      .from(skillVersions)
      .where(eq(skillVersions.skillId, skillId));
    const tagRows = await this.db
      .select({ tag: distTags.tag, versionId: distTags.versionId })
      .from(distTags)
      .where(eq(distTags.skillId, skillId));
    const order = sortVersionsDescending(rows.map((row) => row.version));
    return order.map((version) => {
      const row = rows.find((candidate) => candidate.version === version)!;
      return {
        version,
        digest: row.digest,
        createdAt: row.createdAt,
        yanked: row.yankedAt !== null,
        tags: tagRows
          .filter((tagRow) => tagRow.versionId === row.id)
          .map((tagRow) => tagRow.tag)
          .sort(),
      };
    });
  }

  /** Dist-tags of a skill as `{tag: version}`. */
  async distTags(skillId: string): Promise<Record<string, string>> {
    const rows = await this.db
      .select({ tag: distTags.tag, version: skillVersions.version })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(eq(distTags.skillId, skillId))
      .orderBy(distTags.tag);
    return Object.fromEntries(rows.map((row) => [row.tag, row.version]));
  }

  async moveTag(
    name: string,
    tag: string,
    version: string,
    actor: string,
  ): Promise<{ previous: string | null }> {
    return this.writeTransaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill:${name}`}))`);
      const skillId = await this.skillId(name, tx);
      const previous = await this.pointTag(tx, skillId, name, tag, version, actor);
      await touchSkillAndRevision(tx, skillId);
      return { previous };
    });
  }

  async yank(
    name: string,
    version: string,
    actor: string,
  ): Promise<{ alreadyYanked: boolean; latest: string | null }> {
    return this.writeTransaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill:${name}`}))`);
      const skillId = await this.skillId(name, tx);
      const [row] = await tx
        .select({ id: skillVersions.id, yankedAt: skillVersions.yankedAt })
        .from(skillVersions)
        .where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.version, version)));
      if (!row) {
        const versions = await this.versionNames(skillId, tx);
        throw unknownVersion(name, version, versions);
      }
      if (row.yankedAt) {
        // Inside the transaction, through tx: on PGlite (one connection) this.db would wait for it forever.
        const tags = await this.distTagsIn(tx, skillId);
        return { alreadyYanked: true, latest: tags[LATEST] ?? null };
      }
      await tx.update(skillVersions).set({ yankedAt: new Date() }).where(eq(skillVersions.id, row.id));
      // A yanked version leaves every tag: tags exist to be followed, and a yanked version must not be.
      const removedTags = await tx
        .delete(distTags)
        .where(eq(distTags.versionId, row.id))
        .returning({ tag: distTags.tag });
      await refreshLatest(tx, skillId);
      await recordAudit(tx, {
        actor,
        action: 'yank',
        skill: name,
        version,
        detail: { removedTags: removedTags.map((tagRow) => tagRow.tag) },
      });
      await touchSkillAndRevision(tx, skillId);
      const tags = await this.distTagsIn(tx, skillId);
      return { alreadyYanked: false, latest: tags[LATEST] ?? null };
    });
  }

  /** The closest existing names to an unknown one, best first. */
  async closestNames(name: string, limit = 5, db: Db = this.db): Promise<string[]> {
    const pattern = `%${escapeLike(name)}%`;
    const rows = await db
      .select({ name: skills.name })
      .from(skills)
      .where(
        sql`similarity(${skills.name}, ${name}) > 0.2 or ${skills.name} ilike ${pattern} or ${name} ilike '%' || ${skills.name} || '%'`,
      )
      .orderBy(sql`similarity(${skills.name}, ${name}) desc`, skills.name)
      .limit(limit);
    return rows.map((row) => row.name);
  }

  async skillId(name: string, db: Db = this.db): Promise<string> {
    const [row] = await db.select({ id: skills.id }).from(skills).where(eq(skills.name, name));
    if (!row) throw await this.unknownSkill(name, db);
    return row.id;
  }

  /** `db` is the transaction when there is one: on PGlite a query outside it would wait for it forever. */
  private async unknownSkill(name: string, db: Db = this.db): Promise<NotFoundError> {
    const suggestions = await this.closestNames(name, 5, db);
    const hint =
      suggestions.length > 0
        ? ` Did you mean: ${suggestions.join(', ')}?`
        : ' List the available skills with GET /skills.';
    return new NotFoundError(`no skill named '${name}'.${hint}`, { name, suggestions });
  }

  private async versionNames(skillId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db
      .select({ version: skillVersions.version })
      .from(skillVersions)
      .where(eq(skillVersions.skillId, skillId));
    return sortVersionsDescending(rows.map((row) => row.version));
  }

  private async tagNames(skillId: string): Promise<string[]> {
    const rows = await this.db
      .select({ tag: distTags.tag })
      .from(distTags)
      .where(eq(distTags.skillId, skillId));
    return rows.map((row) => row.tag).sort();
  }

  private async distTagsIn(tx: Db, skillId: string): Promise<Record<string, string>> {
    const rows = await tx
      .select({ tag: distTags.tag, version: skillVersions.version })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(eq(distTags.skillId, skillId));
    return Object.fromEntries(rows.map((row) => [row.tag, row.version]));
  }

  /** Points a tag at a version inside a transaction; returns the version it pointed at before. */
  private async pointTag(
    tx: Db,
    skillId: string,
    name: string,
    tag: string,
    version: string,
    actor: string,
  ): Promise<string | null> {
    const [target] = await tx
      .select({ id: skillVersions.id, yankedAt: skillVersions.yankedAt })
      .from(skillVersions)
      .where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.version, version)));
    if (!target) {
      const versions = await this.versionNames(skillId, tx);
      throw unknownVersion(name, version, versions);
    }
    if (target.yankedAt) {
      throw new ConflictError(
        `version ${version} of '${name}' is yanked and cannot carry a dist-tag; pick a version that is not yanked`,
        { name, version },
      );
    }
    const [before] = await tx
      .select({ version: skillVersions.version })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(and(eq(distTags.skillId, skillId), eq(distTags.tag, tag)));
    await tx
      .insert(distTags)
      .values({ skillId, tag, versionId: target.id, pinned: true, updatedAt: new Date() })
      .onConflictDoUpdate({
        target: [distTags.skillId, distTags.tag],
        set: { versionId: target.id, pinned: true, updatedAt: new Date() },
      });
    await recordAudit(tx, {
      actor,
      action: 'tag',
      skill: name,
      version,
      detail: { tag, previous: before?.version ?? null },
    });
    return before?.version ?? null;
  }
}

async function upsertSkill(tx: Db, name: string): Promise<string> {
  await tx.insert(skills).values({ name }).onConflictDoNothing({ target: skills.name });
  const [row] = await tx.select({ id: skills.id }).from(skills).where(eq(skills.name, name));
  return row!.id;
}

/**
 * Identical content is idempotent: the version it was published as answers again. With an explicit
 * version only that version counts, so CI can deliberately re-release the same files under a new number.
 */
function findIdenticalVersion(
  existing: { version: string; digest: string; yankedAt: Date | null }[],
  digest: string,
  choice: { version: string; source: string },
) {
  const sameVersion = existing.find((row) => row.version === choice.version && row.digest === digest);
  if (sameVersion) return sameVersion;
  if (choice.source === 'query') return undefined;
  const matches = existing.filter((row) => row.digest === digest);
  const live = matches.filter((row) => !row.yankedAt);
  const pool = live.length > 0 ? live : matches;
  const newest = sortVersionsDescending(pool.map((row) => row.version))[0];
  return pool.find((row) => row.version === newest);
}

async function insertVersion(
  tx: Db,
  skillId: string,
  version: string,
  input: PublishInput,
  archive: Promise<BuiltArchive>,
): Promise<string> {
  const { skill, files, digest } = input;
  const skillMd = files.find((file) => file.path === 'SKILL.md');
  const fileDigests = files.map((file) => ({ bytes: file.bytes, digest: fileDigest(file.bytes) }));
  const [row] = await tx
    .insert(skillVersions)
    .values({
      skillId,
      version,
      digest,
      name: skill.name,
      description: skill.description,
      frontmatter: skill.frontmatter,
      body: skill.body,
      skillMdSize: skillMd?.bytes.byteLength ?? 0,
      totalSize: files.reduce((sum, file) => sum + file.bytes.byteLength, 0),
      fileCount: files.length,
      tokensDescription: countCatalogueEntryTokens(skill.name, skill.description),
      tokensBody: countTokens(skill.body),
      ...promptTokenColumns(skill.name, skill.description),
      warnings: skill.warnings,
      publishedBy: input.actor,
    })
    .returning({ id: skillVersions.id });
  const versionId = row!.id;
  // The archive is stored like any file content (one blob statement for both), then linked.
  const built = await archive;
  await storeBlobs(tx, [...fileDigests, { bytes: built.bytes, digest: built.sha256 }]);
  if (files.length > 0) {
    await tx.insert(versionFiles).values(
      files.map((file, index) => ({
        versionId,
        path: file.path,
        blobDigest: fileDigests[index]!.digest,
        size: file.bytes.byteLength,
        mode: file.mode,
      })),
    );
  }
  await tx
    .insert(versionArchives)
    .values({ versionId, format: built.format, blobDigest: built.sha256 })
    .onConflictDoNothing();
  return versionId;
}

interface BuiltArchive {
  format: ArchiveFormat;
  bytes: Uint8Array;
  /** Hex sha256 of the bytes: the blob digest, and what the discovery index lists. */
  sha256: string;
}

/** The deterministic archive of a version's files (the same bytes whether built at publish or later). */
async function buildArchive(files: readonly BundleFile[], format: ArchiveFormat): Promise<BuiltArchive> {
  const bytes = format === 'zip' ? await writeZip(files) : await writeTarGz(files);
  return { format, bytes, sha256: fileDigest(bytes) };
}

/** Stores built archives and links them to their versions; an archive already stored stays. */
async function storeArchives(
  tx: Db,
  built: readonly (BuiltArchive & { versionId: string })[],
  format: ArchiveFormat,
): Promise<void> {
  if (built.length === 0) return;
  await storeBlobs(
    tx,
    built.map((archive) => ({ bytes: archive.bytes, digest: archive.sha256 })),
  );
  await tx
    .insert(versionArchives)
    .values(built.map((archive) => ({ versionId: archive.versionId, format, blobDigest: archive.sha256 })))
    .onConflictDoNothing();
}

/** Splits versions into batches of at most ARCHIVE_BATCH_VERSIONS and about ARCHIVE_BATCH_BYTES. */
function archiveBatches<T extends { totalSize: number }>(versions: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const version of versions) {
    if (
      current.length > 0 &&
      (current.length >= ARCHIVE_BATCH_VERSIONS || bytes + version.totalSize > ARCHIVE_BATCH_BYTES)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(version);
    bytes += version.totalSize;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Inserts the contents not stored yet; a file shared by many versions is stored once. */
async function storeBlobs(tx: Db, fileDigests: { bytes: Uint8Array; digest: string }[]): Promise<void> {
  const unique = new Map(fileDigests.map((entry) => [entry.digest, entry.bytes]));
  if (unique.size === 0) return;
  const present = await tx
    .select({ digest: blobs.digest })
    .from(blobs)
    .where(inArray(blobs.digest, [...unique.keys()]));
  for (const { digest } of present) unique.delete(digest);
  const missing = [...unique.entries()].map(([digest, content]) => ({
    digest,
    size: content.byteLength,
    content,
  }));
  // Batches keep each statement's parameters and memory reasonable for bundles of thousands of files.
  for (let start = 0; start < missing.length; start += 500) {
    await tx
      .insert(blobs)
      .values(missing.slice(start, start + 500))
      .onConflictDoNothing();
  }
}

/** Re-points an unpinned (or dangling) `latest` at the highest non-yanked version. */
async function refreshLatest(tx: Db, skillId: string): Promise<void> {
  const [current] = await tx
    .select({ pinned: distTags.pinned, versionId: distTags.versionId })
    .from(distTags)
    .where(and(eq(distTags.skillId, skillId), eq(distTags.tag, LATEST)));
  if (current?.pinned) return;
  const live = await tx
    .select({ id: skillVersions.id, version: skillVersions.version })
    .from(skillVersions)
    .where(and(eq(skillVersions.skillId, skillId), isNull(skillVersions.yankedAt)));
  const latest = pickLatest(live.map((row) => row.version));
  const target = live.find((row) => row.version === latest);
  if (!target) {
    await tx.delete(distTags).where(and(eq(distTags.skillId, skillId), eq(distTags.tag, LATEST)));
    return;
  }
  if (current?.versionId === target.id) return;
  await tx
    .insert(distTags)
    .values({ skillId, tag: LATEST, versionId: target.id, pinned: false, updatedAt: new Date() })
    .onConflictDoUpdate({
      target: [distTags.skillId, distTags.tag],
      set: { versionId: target.id, pinned: false, updatedAt: new Date() },
    });
}

/**
 * Last statement of every write (the revision row is a hot spot, so its lock is held as briefly as
 * possible), and one statement: bumps the revision, stamps the skill with it (what in-memory agent
 * catalogues read changes by) and queues the NOTIFY that every replica's change feed receives when
 * (and only if) the transaction commits. Revisions are handed out under the row's lock, so they
 * follow commit order: a reader that sees revision R sees every skill stamped R or lower.
 */
async function touchSkillAndRevision(tx: Db, skillId: string): Promise<void> {
  const result = await tx.execute(sql`
    with bumped as (
      update ${registryState} set revision = ${registryState.revision} + 1, updated_at = now()
      where ${registryState.id} = 1 returning ${registryState.revision}
    ), touched as (
      update ${skills} set updated_at = now(), changed_revision = (select revision from bumped)
      where ${skills.id} = ${skillId} returning ${skills.name}
    )
    select bumped.revision::text as revision, touched.name as name,
      pg_notify(${CHANGES_CHANNEL}, 'r:' || bumped.revision || ':' || coalesce(touched.name, ''))
    from bumped left join touched on true`);
  const [row] = (result as unknown as { rows: { revision: string; name: string | null }[] }).rows;
  if (row) bumpedRevisions.set(tx, { revision: Number(row.revision), skill: row.name ?? undefined });
}

function searchMatches(q: string) {
  const pattern = `%${escapeLike(q)}%`;
  return sql`(${skillVersions.search} @@ websearch_to_tsquery('english', ${q}) or ${skillVersions.search} @@ websearch_to_tsquery('simple', ${q}) or ${skillVersions.name} ilike ${pattern})`;
}

function searchRank(q: string) {
  return sql`(ts_rank_cd(${skillVersions.search}, websearch_to_tsquery('english', ${q})) + ts_rank_cd(${skillVersions.search}, websearch_to_tsquery('simple', ${q})) + similarity(${skillVersions.name}, ${q}) + case when ${skillVersions.name} = ${q} then 10 else 0 end)`;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

interface Cursor {
  after?: string;
  offset?: number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(raw: string | undefined, searching: boolean): Cursor {
  if (raw === undefined || raw === '') return {};
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (searching && typeof cursor.offset === 'number' && cursor.offset >= 0)
      return { offset: cursor.offset };
    if (!searching && typeof cursor.after === 'string') return { after: cursor.after };
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError(
    'cursor is not one this registry issued for this query; pass the nextCursor value of the previous page unchanged, with the same q',
    { parameter: 'cursor' },
  );
}

/** The columns of one catalogue row; `tags` lists the dist-tags on the row's version. */
function catalogueColumns(tagsOfVersion: SQL<string[]>) {
  return {
    name: skills.name,
    description: skillVersions.description,
    version: skillVersions.version,
    digest: skillVersions.digest,
    updatedAt: distTags.updatedAt,
    tokensDescription: skillVersions.tokensDescription,
    tokensBody: skillVersions.tokensBody,
    frontmatter: skillVersions.frontmatter,
    tags: tagsOfVersion,
  };
}

/** A 404 for a version a skill does not have, listing the ones it has. */
function unknownVersion(name: string, version: string, versions: string[]): NotFoundError {
  return new NotFoundError(
    `skill '${name}' has no version '${version}'; available versions: ${versions.join(', ') || 'none'}`,
    { name, version, availableVersions: versions },
  );
}
