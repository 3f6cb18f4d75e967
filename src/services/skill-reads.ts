import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { normalizeEntryPath } from '../bundle/paths.js';
import { BundleError } from '../bundle/types.js';
import { SKILL_MD } from '../bundle/validate.js';
import { sortVersionsDescending } from '../bundle/version.js';
import type { AgentCatalogues } from '../cache/agent-catalogues.js';
import type { ReadCache } from '../cache/read-cache.js';
import { BadRequestError } from '../domain/app-errors.js';
import { layersOf, type Scope, skillKey } from '../domain/scope.js';
import { argumentsFingerprint, declaredArgumentNames, substituteArguments } from '../render/arguments.js';
import { bufferBody, jsonBody } from '../render/response-bodies.js';
import { renderSkillXml, SKILL_XML_RENDERING } from '../render/skill-content.js';
import type { CatalogueRepository } from '../storage/catalogue-repository.js';
import type { FileEntry, VersionRecord, VersionRow, VersionSelector } from '../storage/records.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type { UsageRecorder } from '../storage/usage-recorder.js';
import {
  type catalogueItemSchema,
  type catalogueResponseSchema,
  contentJsonSchema,
  type scanSchema,
  searchResponseSchema,
  skillDetailSchema,
  versionsResponseSchema,
} from '../wire/index.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { CachedReads } from './cached-read.js';
import { contentTypeFor } from './file-types.js';
import type { InstalledVersionService } from './installed-versions.js';
import { type ListedSkill, type ListingQuery, SkillListing } from './listing.js';
import { unknownFile, unknownSkill } from './not-found.js';
import { type Resolved, SkillResolver } from './resolution.js';
import { checkedQuery, type SkillSearchService } from './skill-search.js';

export type { Resolved };

/** The file that is the skill itself: reading it is a load, any other file a use. */
export { SKILL_MD };

export type ContentFormat = 'markdown' | 'json' | 'xml';

export const CONTENT_TYPES = {
  markdown: 'text/markdown; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  json: JSON_CONTENT_TYPE,
} as const;

/** One bundled file as every face reads it. */
export interface StoredFile {
  path: string;
  bytes: Buffer;
  /** Hex sha256 of the bytes. */
  digest: string;
  contentType: string;
}

export interface VersionSummary {
  version: string;
  digest: string;
  createdAt: Date;
  yanked: boolean;
  tags: string[];
}

/** Exactly one of version or tag; both at once is ambiguous. */
export function selectorOf(query: { version?: string; tag?: string }): VersionSelector {
  if (query.version !== undefined && query.tag !== undefined) {
    throw new BadRequestError('pass either version= or tag=, not both', { parameters: ['version', 'tag'] });
  }
  return query.version !== undefined ? { version: query.version } : { tag: query.tag };
}

/**
 * A file path as stored: canonical (normalizeEntryPath ran on every path at publish). A path that is
 * no valid bundle path (`..`, absolute, NUL or control characters, after URL decoding) is refused
 * before any lookup; NUL would otherwise reach PostgreSQL and fail as a 500.
 */
export function bundlePathOf(raw: string): string {
  try {
    return normalizeEntryPath(raw);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    throw new BadRequestError(
      `${error.message}; file paths are relative to the skill root, e.g. references/api.md`,
      { parameter: 'path' },
    );
  }
}

function fileEntries(files: readonly FileEntry[]) {
  return files.map(({ path, size, digest }) => ({ path, size, digest: `sha256:${digest}` }));
}

/**
 * Every read of skills, for every face (REST, MCP, the discovery index, the agent renderings, the
 * vendor APIs): which version a selector means, what is listed (`listing`), what each representation
 * is and how long it stays true. Every read is described once (CachedReads): its ETag, cache key and
 * validity follow from what it depends on. The catalogue revision comes from memory while the change
 * feed is live, so a revalidation costs no query. Authorization is the faces' business and happens
 * before any of this.
 */
export class SkillReadService {
  constructor(
    private readonly skills: SkillsRepository,
    catalogue: CatalogueRepository,
    private readonly cache: ReadCache,
    private readonly loads: UsageRecorder,
    private readonly search: SkillSearchService,
    catalogues: AgentCatalogues,
    /** What hosts install of a version (computedHash, git ids). */
    readonly installed: InstalledVersionService,
  ) {
    this.resolver = new SkillResolver(skills, cache);
    this.cached = new CachedReads(cache);
    this.listing = new SkillListing(catalogue, search, this.cached, catalogues);
  }

  /** Which version a (scope, name, selector) means: the one resolution every face uses. */
  readonly resolver: SkillResolver;
  /** The one caching protocol: a read described once gets its ETag, cache key and validity. */
  readonly cached: CachedReads;
  /** The one listing of skills every face maps to its wire. */
  readonly listing: SkillListing;

  /** The names each cached GET /search answer holds, for search feedback when it is sent again. */
  private readonly searchedNames = new LRUCache<string, string[]>({ max: 1_000 });

  /** The catalogue revision as of this request. */
  revision(): Promise<number> {
    return this.cache.revision();
  }

  /** Resolves a selector to one stored version, or throws a 404 that says what exists. */
  resolve(scope: Scope, name: string, selector: VersionSelector = {}): Promise<Resolved> {
    return this.resolver.resolve(scope, name, selector);
  }

  /** Like resolve, with an exact version's yank flag as it is now (SkillResolver.resolveWithYank). */
  resolveWithYank(scope: Scope, name: string, selector: VersionSelector = {}): Promise<Resolved> {
    return this.resolver.resolveWithYank(scope, name, selector);
  }

  /** Counts a bundled-file read (not SKILL.md, a load) or a bundle download of a resolved skill. */
  recordUse(resolved: Resolved, kind: 'files' | 'downloads'): void {
    this.loads.recordUse(skillKey(resolved.namespace, resolved.record.name), resolved.record.version, kind);
  }

  /** Counts a layer-2 load of a resolved skill (a body, or SKILL.md read as a file). */
  recordLoad(resolved: Resolved, client?: string): void {
    const key = skillKey(resolved.namespace, resolved.record.name);
    this.loads.record(key, resolved.record.version);
    if (client !== undefined) this.search.noteLoad(client, key);
  }

  /**
   * Counts the read of one bundled file, on every face (REST files, MCP resources and
   * read_skill_file): SKILL.md is the skill itself, a load; any other file is a use (layer 3).
   */
  recordFileRead(resolved: Resolved, path: string, client?: string): void {
    if (path === SKILL_MD) this.recordLoad(resolved, client);
    else this.recordUse(resolved, 'files');
  }

  /** A catalogue page or search (layer 1), as GET /skills answers it. */
  async cataloguePage(scope: Scope, query: ListingQuery): Promise<Answer> {
    const read = await this.cached.of({ read: 'skills', on: { kind: 'scope', scope }, shape: [query] });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () => {
        const page = await this.listing.page(scope, query);
        const answer: z.output<typeof catalogueResponseSchema> = {
          items: page.items.map(catalogueWireItem),
          nextCursor: page.nextCursor,
        };
        return bufferBody(JSON.stringify(answer));
      },
    });
  }

  /**
   * What the search_skills tool answers, as GET /search sends it: the best matches a model may load,
   * true for the catalogue revision it was searched at. The query is checked before any validator is
   * compared, so an empty or overlong one is a 400 even to a client sending `If-None-Match: *`.
   */
  async searchAnswer(
    scope: Scope,
    request: { query: string; limit?: number; tag?: string },
  ): Promise<Answer> {
    const query = checkedQuery(request.query);
    const shape = { query, limit: request.limit ?? null, tag: request.tag ?? null };
    const read = await this.cached.of({ read: 'search', on: { kind: 'scope', scope }, shape: [shape] });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () => {
        const results = await this.search.searchSkills(scope, { ...request, query });
        this.searchedNames.set(
          read.etag,
          results.map((result) => result.name),
        );
        return jsonBody(searchResponseSchema, { query, results });
      },
      // Each answer sent, cached or not, is a search a later load by the same client may follow.
      onBody: (client) => this.search.noteSearch(client, query, this.searchedNames.get(read.etag) ?? []),
    });
  }

  /**
   * One version's metadata document: frontmatter, files, dist-tags and every version. In a view it
   * also says which layer the skill resolved from (`resolvedFrom`) and which it hides (`shadows`).
   */
  async metadata(scope: Scope, name: string, query: { version?: string; tag?: string }): Promise<Answer> {
    const selector = selectorOf(query);
    // The document shows the yank flag of exact versions: resolved with the flag as it is now.
    const resolved = await this.resolver.resolveWithYank(scope, name, selector);
    const { record, revision, namespace } = resolved;
    const inView = scope.kind === 'view';
    // Dist-tags and versions change with every write to the skill, even for an exact version; in a
    // view, a write to any layer may change which layer wins or what it shadows.
    const read = await this.cached.of(
      inView
        ? { read: 'skill', on: { kind: 'scope', scope }, shape: [name, query] }
        : {
            read: 'skill',
            on: { kind: 'skill', skill: skillKey(namespace, record.name), at: revision },
            shape: [query],
          },
    );
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      immutable: selector.version !== undefined,
      render: async () =>
        jsonBody(skillDetailSchema, {
          ...(await this.detailDocument(record)),
          namespace,
          ...(inView
            ? { resolvedFrom: namespace, shadows: await this.resolver.shadowed(scope, resolved) }
            : {}),
        }),
    });
  }

  private async detailDocument(record: VersionRecord) {
    const [files, distTags, versions] = await Promise.all([
      this.skills.files(record.id),
      this.skills.distTags(record.skillId),
      this.versionsOf(record.skillId),
    ]);
    return {
      name: record.name,
      version: record.version,
      description: record.description,
      digest: record.digest,
      frontmatter: record.frontmatter,
      createdAt: record.createdAt.toISOString(),
      yanked: record.yankedAt !== null,
      tokens: { description: record.tokensDescription, body: record.tokensBody },
      size: record.totalSize,
      files: fileEntries(files),
      distTags,
      versions: versions.map((summary) => ({ ...summary, createdAt: summary.createdAt.toISOString() })),
      scan: record.scan as z.infer<typeof scanSchema> | null,
      computedHash: record.computedHash ?? (await this.installed.identity(record.id)).computedHash,
    };
  }

  /**
   * Every version of a skill, newest first, with the dist-tags on each. In a view: of the skill in
   * the highest layer that holds the name at all (version lines are per namespace).
   */
  async versions(scope: Scope, name: string): Promise<VersionSummary[]> {
    const { skillId } = await this.holder(scope, name);
    return this.versionsOf(skillId);
  }

  /** GET /skills/{name}/versions. */
  async versionsAnswer(scope: Scope, name: string): Promise<Answer> {
    const at = await this.cache.revision();
    const { namespace } = await this.holder(scope, name);
    const read = await this.cached.of(
      scope.kind === 'view'
        ? { read: 'versions', on: { kind: 'scope', scope }, shape: [name] }
        : { read: 'versions', on: { kind: 'skill', skill: skillKey(namespace, name), at } },
    );
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () =>
        jsonBody(
          versionsResponseSchema,
          (await this.versions({ kind: 'namespace', namespace }, name)).map((summary) => ({
            ...summary,
            createdAt: summary.createdAt.toISOString(),
          })),
        ),
    });
  }

  /** The highest layer of `scope` holding a skill named `name` (servable or not), or a 404. */
  private async holder(scope: Scope, name: string): Promise<{ namespace: string; skillId: string }> {
    const layers = layersOf(scope);
    for (let at = layers.length - 1; at >= 0; at--) {
      const skillId = await this.skills.idOf(name, layers[at]);
      if (skillId !== undefined) return { namespace: layers[at]!, skillId };
    }
    throw await unknownSkill(name, this.skills, layers);
  }

  /**
   * A skill's version line in a scope, where its current version resolves (in a view, the layer that
   * wins): every version that may be served (quarantined and rejected ones left out, yanked ones kept)
   * and the dist-tags on them.
   */
  async versionLine(
    scope: Scope,
    name: string,
  ): Promise<{
    name: string;
    namespace: string;
    versions: VersionRow[];
    tags: { tag: string; versionId: string }[];
  }> {
    const { record, namespace } = await this.resolve(scope, name, {});
    const [rows, tags] = await Promise.all([
      this.skills.versionRows(record.skillId),
      this.skills.tagRows(record.skillId),
    ]);
    const versions = rows.filter((row) => row.quarantine === null);
    const servable = new Set(versions.map((row) => row.id));
    return {
      name: record.name,
      namespace,
      versions,
      tags: tags.filter((tag) => servable.has(tag.versionId)),
    };
  }

  /** The files of a version (path, size, digest), by path. */
  files(record: VersionRecord): Promise<FileEntry[]> {
    return this.skills.files(record.id);
  }

  /**
   * The body (layer 2) in a format, with `arguments` substituted as Claude Code does. Sending it
   * counts a load.
   */
  async content(
    scope: Scope,
    name: string,
    query: { version?: string; tag?: string },
    format: ContentFormat,
    argumentString?: string,
  ): Promise<Answer> {
    const resolved = await this.resolve(scope, name, selectorOf(query));
    const { record } = resolved;
    // The JSON rendering names the version, and one digest can be published under several versions.
    const rendering =
      format === 'json' ? `json.${record.version}` : format === 'xml' ? SKILL_XML_RENDERING : format;
    const withArguments = argumentString !== undefined;
    const read = await this.cached.of({
      read: 'content',
      on: { kind: 'version', id: record.id, digest: record.digest },
      shape: withArguments ? [rendering, `a${argumentsFingerprint(argumentString)}`] : [rendering],
      through: { scope, resolved },
    });
    return read.answer({
      contentType: CONTENT_TYPES[format],
      headers: { 'x-skill-version': record.version },
      onBody: (client) => this.recordLoad(resolved, client),
      // Answers with arguments are neither kept nor repeated: the argument strings are unbounded.
      ...(withArguments
        ? { unrepeatable: true, payload: () => this.substituted(record, format, argumentString) }
        : format === 'markdown'
          ? // The cached record holds the body already: sent as it is rather than kept a second time.
            { payload: async () => record.body }
          : {
              render: async () =>
                format === 'xml'
                  ? bufferBody(renderSkillXml(record.name, record.body))
                  : jsonBody(contentJsonSchema, await this.contentDocument(record, record.body)),
            }),
    });
  }

  /** One bundled file (layer 3): the path refused unless it is a valid bundle path, then looked up. */
  file(record: VersionRecord, rawPath: string): Promise<StoredFile> {
    return this.storedFile(record, bundlePathOf(rawPath));
  }

  /** A file by its canonical path (bundlePathOf ran on it). */
  private async storedFile(record: VersionRecord, path: string): Promise<StoredFile> {
    // A file of a version never changes; a large one is served without being kept (maxEntryBytes).
    const read = await this.cached.of({
      read: 'file',
      on: { kind: 'version', id: record.id, digest: record.digest },
      shape: [path],
    });
    return read.value(async () => {
      const stored = await this.skills.readFile(record.id, path);
      if (!stored) {
        const paths = (await this.skills.files(record.id)).map((file) => file.path);
        throw unknownFile(record, path, paths);
      }
      const { value } = bufferBody(stored.bytes);
      return {
        value: { path, bytes: value, digest: stored.digest, contentType: contentTypeFor(path, stored.bytes) },
        bytes: value.byteLength + path.length * 2 + 200,
      };
    });
  }

  /** GET /skills/{name}/files/{path}. */
  async fileAnswer(
    scope: Scope,
    name: string,
    query: { version?: string; tag?: string },
    rawPath: string,
  ): Promise<Answer> {
    const selector = selectorOf(query);
    // A path that can be no bundle path is refused before the skill is looked up.
    const path = bundlePathOf(rawPath);
    const resolved = await this.resolve(scope, name, selector);
    const file = await this.storedFile(resolved.record, path);
    // Named by the file's own digest: a file the next version leaves as it is keeps its ETag.
    const read = await this.cached.of({
      read: 'file',
      on: { kind: 'version', id: resolved.record.id, digest: file.digest },
      through: { scope, resolved },
    });
    return read.answer({
      contentType: file.contentType,
      onBody: (client) => this.recordFileRead(resolved, path, client),
      headers: {
        // Bundled HTML or SVG must not run as this registry's origin.
        'content-security-policy': "default-src 'none'; sandbox",
        'x-content-type-options': 'nosniff',
        'x-skill-version': resolved.record.version,
      },
      payload: async () => file.bytes,
    });
  }

  private async versionsOf(skillId: string): Promise<VersionSummary[]> {
    const [rows, tagRows] = await Promise.all([
      this.skills.versionRows(skillId),
      this.skills.tagRows(skillId),
    ]);
    // Quarantined versions are no one's to read: listed only by GET /quarantine.
    const servable = rows.filter((row) => row.quarantine === null);
    const byVersion = new Map(servable.map((row) => [row.version, row]));
    return sortVersionsDescending(servable.map((row) => row.version)).map((version) => {
      const row = byVersion.get(version)!;
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

  private async contentDocument(record: VersionRecord, body: string) {
    return {
      name: record.name,
      version: record.version,
      digest: record.digest,
      frontmatter: record.frontmatter,
      body,
      files: fileEntries(await this.skills.files(record.id)),
    };
  }

  private async substituted(
    record: VersionRecord,
    format: ContentFormat,
    argumentString: string,
  ): Promise<Buffer | string> {
    const body = substituteArguments(record.body, argumentString, {
      names: declaredArgumentNames(record.frontmatter),
    });
    if (format === 'xml') return renderSkillXml(record.name, body);
    if (format === 'markdown') return body;
    return jsonBody(contentJsonSchema, await this.contentDocument(record, body)).value;
  }
}

/**
 * A listed skill as GET /skills sends it: catalogueItemSchema's fields in its order, so the bytes are
 * what encoding with the schema would give (test/http/catalogue-wire.test.ts compares them) without
 * the schema's copy of every page, the largest uncached answer there is.
 */
export function catalogueWireItem(item: ListedSkill): z.output<typeof catalogueItemSchema> {
  return {
    name: item.name,
    description: item.description,
    version: item.version,
    tags: item.tags,
    digest: item.digest,
    updatedAt: item.updatedAt.toISOString(),
    tokens: item.tokens,
    // JSON leaves out what is undefined, as the schema leaves out an absent optional field.
    match: item.match,
    namespace: item.namespace,
    scan: item.scan,
  };
}
