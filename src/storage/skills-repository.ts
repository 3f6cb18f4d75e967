import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { notifyRevision } from '../db/change-notifications.js';
import type { Db } from '../db/client.js';
import {
  blobs,
  distTags,
  namespaces,
  registryState,
  skills,
  skillVersions,
  versionArchives,
  versionFiles,
  views,
} from '../db/schema.js';
import { DEFAULT_NAMESPACE, skillKey } from '../domain/scope.js';
import type { OidcPublisher } from '../wire/types.js';
import { type AuditEntry, recordAudit } from './audit-repository.js';
import { type NewBlob, storeBlobs } from './blobs.js';
import {
  type ArchiveKey,
  type CatalogueChange,
  type FileEntry,
  LATEST,
  type StateRevisions,
  type VersionRecord,
  type VersionRow,
  versionColumns,
} from './records.js';

/** The columns of a new version row, every value decided by the publish rules (src/services). */
export interface NewVersion {
  name: string;
  version: string;
  digest: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  skillMdSize: number;
  totalSize: number;
  fileCount: number;
  tokensDescription: number;
  tokensBody: number;
  tokensPromptXml: number | null;
  tokensPromptMarkdown: number | null;
  tokensPromptName: number | null;
  /** The counted search terms (src/search/document.ts encodeTerms). */
  searchTerms: string;
  /** The publish-time scan (src/scan). */
  scan: { verdict: string; rules: string; findings: unknown[]; release?: unknown };
  /** When it was published (default: the database's now). */
  createdAt?: Date;
  /** `held` for a version the scan blocked (stored for review, never served). */
  quarantine: 'held' | null;
  warnings: { path: string; detail: string }[];
  publishedBy: string;
  /** The CI identity of a trusted publish (OIDC); null otherwise. */
  publisher: OidcPublisher | null;
}

/** One file of a new version, its bytes stored as a blob under `digest`. */
export interface NewVersionFile {
  path: string;
  digest: string;
  size: number;
  mode: number;
}

/** An archive stored with a version (its bytes are one of the version's blobs). */
export interface NewVersionArchive {
  key: ArchiveKey;
  digest: string;
}

/** Queries about one skill, on the pool or inside a write transaction. */
export class SkillReads {
  constructor(protected readonly db: Db) {}

  /** The id of the skill named `name` in `namespace`; undefined when there is none. */
  async idOf(name: string, namespace: string = DEFAULT_NAMESPACE): Promise<string | undefined> {
    const [row] = await this.db
      .select({ id: skills.id })
      .from(skills)
      .where(and(eq(skills.namespace, namespace), eq(skills.name, name)));
    return row?.id;
  }

  async namespaceExists(namespace: string): Promise<boolean> {
    const [row] = await this.db
      .select({ name: namespaces.name })
      .from(namespaces)
      .where(eq(namespaces.name, namespace));
    return row !== undefined;
  }

  async namespaceNames(): Promise<string[]> {
    const rows = await this.db.select({ name: namespaces.name }).from(namespaces).orderBy(namespaces.name);
    return rows.map((row) => row.name);
  }

  /** A version by number; a quarantined one only with `quarantined` (reads never see it). */
  async versionByNumber(
    skillId: string,
    version: string,
    { quarantined = false }: { quarantined?: boolean } = {},
  ): Promise<VersionRecord | undefined> {
    const [row] = await this.db
      .select(versionColumns)
      .from(skillVersions)
      .where(
        and(
          eq(skillVersions.skillId, skillId),
          eq(skillVersions.version, version),
          quarantined ? undefined : isNull(skillVersions.quarantine),
        ),
      );
    return row;
  }

  async versionByTag(skillId: string, tag: string): Promise<VersionRecord | undefined> {
    const [row] = await this.db
      .select(versionColumns)
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(and(eq(distTags.skillId, skillId), eq(distTags.tag, tag)));
    return row;
  }

  /** Every version of a skill, in no particular order; quarantined ones say so. */
  async versionRows(skillId: string): Promise<VersionRow[]> {
    return this.db
      .select({
        id: skillVersions.id,
        version: skillVersions.version,
        digest: skillVersions.digest,
        createdAt: skillVersions.createdAt,
        yankedAt: skillVersions.yankedAt,
        quarantine: skillVersions.quarantine,
      })
      .from(skillVersions)
      .where(eq(skillVersions.skillId, skillId));
  }

  /** Which version each dist-tag of a skill points at. */
  async tagRows(skillId: string): Promise<{ tag: string; versionId: string }[]> {
    return this.db
      .select({ tag: distTags.tag, versionId: distTags.versionId })
      .from(distTags)
      .where(eq(distTags.skillId, skillId));
  }

  /** Dist-tags of a skill as `{tag: version}`, by tag. */
  async distTags(skillId: string): Promise<Record<string, string>> {
    const rows = await this.db
      .select({ tag: distTags.tag, version: skillVersions.version })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(eq(distTags.skillId, skillId))
      .orderBy(distTags.tag);
    return Object.fromEntries(rows.map((row) => [row.tag, row.version]));
  }

  /** Names in `namespaces` like `name` (trigram similarity or substring either way), most similar first. */
  async closestNames(
    name: string,
    limit: number,
    inNamespaces: readonly string[] = [DEFAULT_NAMESPACE],
  ): Promise<string[]> {
    const pattern = `%${escapeLike(name)}%`;
    const rows = await this.db
      .select({ name: skills.name })
      .from(skills)
      .where(
        and(
          inArray(skills.namespace, [...inNamespaces]),
          sql`(similarity(${skills.name}, ${name}) > 0.2 or ${skills.name} ilike ${pattern} or ${name} ilike '%' || ${skills.name} || '%')`,
        ),
      )
      .orderBy(sql`similarity(${skills.name}, ${name}) desc`, skills.name)
      .limit(limit * inNamespaces.length);
    return [...new Set(rows.map((row) => row.name))].slice(0, limit);
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

  /** One file's bytes and hex sha256; undefined when the version has no such path. */
  async readFile(
    versionId: string,
    path: string,
  ): Promise<{ bytes: Uint8Array; digest: string } | undefined> {
    const [row] = await this.db
      .select({ content: blobs.content, digest: blobs.digest })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(and(eq(versionFiles.versionId, versionId), eq(versionFiles.path, path)));
    return row ? { bytes: row.content, digest: row.digest } : undefined;
  }

  /** Every file of a version with its bytes, by path. */
  async bundleFiles(versionId: string): Promise<{ path: string; bytes: Uint8Array; mode: number }[]> {
    const rows = await this.db
      .select({ path: versionFiles.path, mode: versionFiles.mode, content: blobs.content })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(eq(versionFiles.versionId, versionId))
      .orderBy(versionFiles.path);
    return rows.map((row) => ({ path: row.path, bytes: row.content, mode: row.mode }));
  }
}

/** Transactions whose revision bump ran, with what it produced; read once the transaction commits. */
const bumpedRevisions = new WeakMap<object, CatalogueChange>();

/**
 * The statements of one write to one skill, inside its transaction. Every query goes through the
 * transaction: on PGlite (one connection) a query on the pool would wait for it forever.
 */
export class SkillWrite extends SkillReads {
  constructor(
    private readonly tx: Db,
    /** The skill's id; undefined when it does not exist (and the write may not create it). */
    readonly skillId: string | undefined,
    /** The namespace the skill is in (audit entries name it). */
    readonly namespace: string = DEFAULT_NAMESPACE,
  ) {
    super(tx);
  }

  async insertVersion(skillId: string, row: NewVersion): Promise<string> {
    const [inserted] = await this.tx
      .insert(skillVersions)
      .values({ skillId, ...row })
      .returning({ id: skillVersions.id });
    return inserted!.id;
  }

  /** Stores a new version's contents (blobs not stored yet), its file list and its archives. */
  async storeVersionContents(
    versionId: string,
    files: readonly NewVersionFile[],
    contents: readonly NewBlob[],
    archives: readonly NewVersionArchive[],
  ): Promise<void> {
    await storeBlobs(this.tx, contents);
    // The file list and the archives in one statement (both only reference the blobs stored above).
    const fileRows = files.map(
      (file) => sql`(${versionId}, ${file.path}, ${file.digest}, ${file.size}, ${file.mode})`,
    );
    const archiveRows = archives.map((archive) => sql`(${versionId}, ${archive.key}, ${archive.digest})`);
    const storeFiles = sql`insert into ${versionFiles} (version_id, path, blob_digest, size, mode)
      values ${sql.join(fileRows, sql`, `)}`;
    const storeArchives = sql`insert into ${versionArchives} (version_id, format, blob_digest)
      values ${sql.join(archiveRows, sql`, `)} on conflict do nothing`;
    if (fileRows.length > 0 && archiveRows.length > 0) {
      await this.tx.execute(sql`with stored_files as (${storeFiles}) ${storeArchives}`);
    } else if (fileRows.length > 0) {
      await this.tx.execute(storeFiles);
    } else if (archiveRows.length > 0) {
      await this.tx.execute(storeArchives);
    }
  }

  /** The `latest` tag row: which version and whether it was moved by hand (pinned). */
  async latestTag(skillId: string): Promise<{ versionId: string; pinned: boolean } | undefined> {
    const [row] = await this.tx
      .select({ pinned: distTags.pinned, versionId: distTags.versionId })
      .from(distTags)
      .where(and(eq(distTags.skillId, skillId), eq(distTags.tag, LATEST)));
    return row;
  }

  /** Versions `latest` may point at: neither yanked nor quarantined. */
  async liveVersions(skillId: string): Promise<{ id: string; version: string }[]> {
    return this.tx
      .select({ id: skillVersions.id, version: skillVersions.version })
      .from(skillVersions)
      .where(
        and(
          eq(skillVersions.skillId, skillId),
          isNull(skillVersions.yankedAt),
          isNull(skillVersions.quarantine),
        ),
      );
  }

  /** Sets a version's quarantine state (null: servable). */
  /**
   * The skill's versions an admin's review released with a blocking verdict (and those such a release
   * covered), newest first: what a later version with the same findings is served on the strength of.
   */
  async releasedVersions(
    skillId: string,
  ): Promise<{ version: string; createdAt: Date; scan: NonNullable<NewVersion['scan']> }[]> {
    const rows = await this.tx
      .select({
        version: skillVersions.version,
        createdAt: skillVersions.createdAt,
        scan: skillVersions.scan,
      })
      .from(skillVersions)
      .where(
        and(
          eq(skillVersions.skillId, skillId),
          isNull(skillVersions.quarantine),
          eq(skillVersions.scanVerdict, 'block'),
          sql`${skillVersions.scan} ? 'release'`,
        ),
      )
      .orderBy(sql`${skillVersions.createdAt} desc`)
      .limit(50);
    return rows.filter(
      (row): row is typeof row & { scan: NonNullable<typeof row.scan> } => row.scan !== null,
    );
  }

  async setQuarantine(versionId: string, state: 'held' | 'rejected' | null): Promise<void> {
    await this.tx.update(skillVersions).set({ quarantine: state }).where(eq(skillVersions.id, versionId));
  }

  /** Stores a version's scan (a rescan's), leaving its quarantine state alone. */
  async setScan(versionId: string, scan: NonNullable<NewVersion['scan']>): Promise<void> {
    await this.tx.update(skillVersions).set({ scan }).where(eq(skillVersions.id, versionId));
  }

  /** Puts a version in quarantine (held) and removes every tag on it; answers the tags removed. */
  async holdVersion(versionId: string): Promise<string[]> {
    await this.tx.update(skillVersions).set({ quarantine: 'held' }).where(eq(skillVersions.id, versionId));
    return this.removeTagsOf(versionId);
  }

  /** Points a tag at a version; `pinned` records a move by hand. */
  async setTag(
    skillId: string,
    tag: string,
    versionId: string,
    { pinned }: { pinned: boolean },
  ): Promise<void> {
    await this.tx
      .insert(distTags)
      .values({ skillId, tag, versionId, pinned, updatedAt: new Date() })
      .onConflictDoUpdate({
        target: [distTags.skillId, distTags.tag],
        set: { versionId, pinned, updatedAt: new Date() },
      });
  }

  async removeTag(skillId: string, tag: string): Promise<void> {
    await this.tx.delete(distTags).where(and(eq(distTags.skillId, skillId), eq(distTags.tag, tag)));
  }

  /** The version a tag points at now, or null. */
  async taggedVersion(skillId: string, tag: string): Promise<string | null> {
    const [row] = await this.tx
      .select({ version: skillVersions.version })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .where(and(eq(distTags.skillId, skillId), eq(distTags.tag, tag)));
    return row?.version ?? null;
  }

  /** Marks a version yanked and removes every tag on it; answers the tags removed. */
  async yankVersion(versionId: string): Promise<string[]> {
    await this.tx.update(skillVersions).set({ yankedAt: new Date() }).where(eq(skillVersions.id, versionId));
    return this.removeTagsOf(versionId);
  }

  private async removeTagsOf(versionId: string): Promise<string[]> {
    const removed = await this.tx
      .delete(distTags)
      .where(eq(distTags.versionId, versionId))
      .returning({ tag: distTags.tag });
    return removed.map((row) => row.tag);
  }

  async audit(entry: AuditEntry): Promise<void> {
    await recordAudit(this.tx, { namespace: this.namespace, ...entry });
  }

  /**
   * Last statement of every write that changes what readers see (the revision row is a hot spot, so
   * its lock is held as briefly as possible), and one statement: bumps the revision, stamps the skill
   * with it (what in-memory agent catalogues catch up by) and queues the NOTIFY every replica's change
   * feed receives when (and only if) the transaction commits. Revisions are handed out under the row's
   * lock, so they follow commit order: a reader that sees revision R sees every skill stamped R or lower.
   */
  async touch(skillId: string): Promise<void> {
    const result = await this.tx.execute(sql`
      with bumped as (
        update ${registryState} set revision = ${registryState.revision} + 1, updated_at = now()
        where ${registryState.id} = 1 returning ${registryState.revision}
      ), touched as (
        update ${skills} set updated_at = now(), changed_revision = (select revision from bumped)
        where ${skills.id} = ${skillId} returning ${skills.namespace}, ${skills.name},
          case when ${skills.namespace} = ${DEFAULT_NAMESPACE} then ${skills.name}
            else ${skills.namespace} || '/' || ${skills.name} end as key
      ), stamped as (
        update ${namespaces} set revision = (select revision from bumped)
        where ${namespaces.name} = (select namespace from touched)
      )
      select bumped.revision::text as revision, touched.key as key,
        ${notifyRevision(sql`bumped.revision`, sql`touched.key`)}
      from bumped left join touched on true`);
    const [row] = (result as unknown as { rows: { revision: string; key: string | null }[] }).rows;
    if (row) bumpedRevisions.set(this.tx, { revision: Number(row.revision), skill: row.key ?? undefined });
  }
}

/** A version in quarantine, as GET /quarantine lists it. */
export interface QuarantinedVersion {
  namespace: string;
  name: string;
  version: string;
  digest: string;
  publishedBy: string;
  createdAt: Date;
  state: string;
  scan: { verdict: string; rules: string; findings: unknown[] } | null;
}

/** A version a rescan goes through. */
export interface RescanCandidate {
  id: string;
  namespace: string;
  name: string;
  version: string;
}

/** Stores and reads skills. Every write is one transaction per skill that also bumps the revision. */
export class SkillsRepository extends SkillReads {
  /** Versions in quarantine in `state` (held or rejected), newest first, at most `limit`. */
  async quarantined(state: 'held' | 'rejected', limit: number): Promise<QuarantinedVersion[]> {
    return this.db
      .select({
        namespace: skills.namespace,
        name: skills.name,
        version: skillVersions.version,
        digest: skillVersions.digest,
        publishedBy: skillVersions.publishedBy,
        createdAt: skillVersions.createdAt,
        state: sql<string>`${skillVersions.quarantine}`,
        scan: skillVersions.scan,
      })
      .from(skillVersions)
      .innerJoin(skills, eq(skills.id, skillVersions.skillId))
      .where(eq(skillVersions.quarantine, state))
      .orderBy(sql`${skillVersions.createdAt} desc`)
      .limit(limit);
  }

  /**
   * Servable versions (not in quarantine; yanked ones included, exact reads still serve them) with
   * ids after `after`, by id, `limit` at a time: what a rescan goes through. `namespace` narrows.
   */
  async versionsToRescan(after: string, limit: number, namespace?: string): Promise<RescanCandidate[]> {
    return this.db
      .select({
        id: skillVersions.id,
        namespace: skills.namespace,
        name: skills.name,
        version: skillVersions.version,
      })
      .from(skillVersions)
      .innerJoin(skills, eq(skills.id, skillVersions.skillId))
      .where(
        and(
          isNull(skillVersions.quarantine),
          sql`${skillVersions.id} > ${after}`,
          namespace === undefined ? undefined : eq(skills.namespace, namespace),
        ),
      )
      .orderBy(skillVersions.id)
      .limit(limit);
  }

  private readonly changeListeners: ((change: CatalogueChange) => void)[] = [];

  /**
   * The registry_state row (catalogue revision and loads revision) with the revision of every
   * namespace and view: one statement, so the revisions agree with one another.
   */
  async state(): Promise<
    StateRevisions & { namespaces: Record<string, number>; views: Record<string, number> }
  > {
    const result = await this.db.execute(sql`
      select ${registryState.revision}::text as revision, ${registryState.loadsRevision}::text as loads_revision,
        (select coalesce(json_object_agg(${namespaces.name}, ${namespaces.revision}), '{}') from ${namespaces}) as namespaces,
        (select coalesce(json_object_agg(${views.name}, ${views.revision}), '{}') from ${views}) as views
      from ${registryState} where ${registryState.id} = 1`);
    const [row] = (
      result as unknown as {
        rows: {
          revision: string;
          loads_revision: string;
          namespaces: Record<string, number | string>;
          views: Record<string, number | string>;
        }[];
      }
    ).rows;
    const numbers = (record: Record<string, number | string> | undefined) =>
      Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, Number(value)]));
    return {
      revision: Number(row?.revision ?? 0),
      loadsRevision: Number(row?.loads_revision ?? 0),
      namespaces: numbers(row?.namespaces),
      views: numbers(row?.views),
    };
  }

  /**
   * Calls `listener` right after each write transaction that bumped the revision commits, before the
   * write returns: the read cache of this process learns of its own writes without waiting for NOTIFY.
   */
  onChange(listener: (change: CatalogueChange) => void): void {
    this.changeListeners.push(listener);
  }

  /** Tells the listeners of a committed change made elsewhere (a view edit, src/storage/views-repository.ts). */
  announce(change: CatalogueChange): void {
    for (const listener of this.changeListeners) listener(change);
  }

  /**
   * One write to the skill `name` of `namespace` (default `default`), serialised with every other write
   * to it across replicas (an advisory lock taken even before its row exists). `create` makes the skill
   * row, and its namespace, when missing.
   */
  async write<T>(
    name: string,
    options: { create: boolean; namespace?: string },
    work: (write: SkillWrite) => Promise<T>,
  ): Promise<T> {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    let handle: object | undefined;
    const result = await this.db.transaction(async (tx) => {
      handle = tx;
      const db = tx as unknown as Db;
      await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill:${skillKey(namespace, name)}`}))`);
      const [row] = options.create
        ? await createdSkill(db, namespace, name)
        : await db
            .select({ id: skills.id })
            .from(skills)
            .where(and(eq(skills.namespace, namespace), eq(skills.name, name)));
      return work(new SkillWrite(db, row?.id, namespace));
    });
    const change = handle && bumpedRevisions.get(handle);
    if (change) for (const listener of this.changeListeners) listener(change);
    return result;
  }
}

/**
 * The skill's id, its row (and its namespace's) made first when missing: one statement. The statement
 * sees the rows as they were when it began, so a skill it made comes from the insert, one that was
 * there from the select; exactly one of the two answers.
 */
async function createdSkill(db: Db, namespace: string, name: string): Promise<{ id: string }[]> {
  const result = await db.execute(sql`
    with made_namespace as (
      insert into ${namespaces} (name) values (${namespace}) on conflict do nothing
    ), made as (
      insert into ${skills} (namespace, name) values (${namespace}, ${name})
      on conflict (namespace, name) do nothing returning ${skills.id}
    )
    select id from made
    union all
    select ${skills.id} from ${skills} where ${skills.namespace} = ${namespace} and ${skills.name} = ${name}`);
  return (result as unknown as { rows: { id: string }[] }).rows;
}

export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}
