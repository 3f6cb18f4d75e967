import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { normalizeEntryPath } from '../bundle/paths.js';
import { BundleError } from '../bundle/types.js';
import { sortVersionsDescending } from '../bundle/version.js';
import { bufferBody, jsonBody } from '../cache/bodies.js';
import { digestEtag, revisionEtag } from '../cache/etags.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { ResponseValidity } from '../cache/response-cache.js';
import { BadRequestError } from '../errors.js';
import { layersOf, type Scope, scopeKey, skillKey } from '../namespaces.js';
import { argumentsFingerprint, declaredArgumentNames, substituteArguments } from '../render/arguments.js';
import { renderSkillXml, SKILL_XML_RENDERING } from '../render/skill-content.js';
import {
  type CatalogueItem,
  type CatalogueQuery,
  type CatalogueRepository,
  encodeCatalogueCursor,
} from '../storage/catalogue-repository.js';
import type { FileEntry, VersionRecord, VersionSelector } from '../storage/records.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type { UsageRecorder } from '../storage/usage-recorder.js';
import { type Answer, bodyOf, JSON_CONTENT_TYPE } from './answers.js';
import {
  catalogueResponseSchema,
  contentJsonSchema,
  type scanSchema,
  searchResponseSchema,
  skillDetailSchema,
  versionsResponseSchema,
} from './documents.js';
import { contentTypeFor } from './file-types.js';
import { unknownFile, unknownSkill } from './not-found.js';
import { type Resolved, SkillResolver } from './resolution.js';
import { checkedQuery, type SearchMatch, type SkillSearchService } from './skill-search.js';

export type { Resolved };

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
 * Every read of skills, for every face (REST, MCP, the discovery index, the agent renderings): which
 * version a selector means, what each representation is and how long it stays true. Reads go through
 * the read cache: the catalogue revision comes from memory while the change feed is live, so a
 * revalidation costs no query, and representations are kept serialised. Authorization is the
 * faces' business and happens before any of this.
 */
export class SkillReadService {
  constructor(
    private readonly skills: SkillsRepository,
    private readonly catalogue: CatalogueRepository,
    private readonly cache: ReadCache,
    private readonly loads: UsageRecorder,
    private readonly search: SkillSearchService,
  ) {
    this.resolver = new SkillResolver(skills, cache);
  }

  /** Which version a (scope, name, selector) means: the one resolution every face uses. */
  readonly resolver: SkillResolver;

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

  /** Counts a layer-2 load of a resolved skill (a body, or SKILL.md over MCP). */
  recordLoad(resolved: Resolved, client?: string): void {
    const key = skillKey(resolved.namespace, resolved.record.name);
    this.loads.record(key, resolved.record.version);
    if (client !== undefined) this.search.noteLoad(client, key);
  }

  /**
   * How long an answer read through `resolved` stays true: forever for an exact version; else until
   * a write to the skill, or in a view until anything in its layers changes (another layer may win).
   */
  validity(scope: Scope, resolved: Resolved): ResponseValidity {
    if (resolved.selector.version !== undefined) return { kind: 'immutable' };
    if (scope.kind === 'view') {
      return { kind: 'scope', scope, revision: this.cache.state.scopeRevision(scope) };
    }
    return {
      kind: 'skill',
      skill: skillKey(resolved.namespace, resolved.record.name),
      revision: resolved.revision,
    };
  }

  /** A catalogue page or search (layer 1), as GET /skills answers it. */
  async cataloguePage(scope: Scope, query: CatalogueQuery): Promise<Answer> {
    const revision = await this.cache.scopeRevision(scope);
    const where = scopeKey(scope);
    return {
      etag: revisionEtag(revision, 'skills', where, query),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'scope', scope, revision },
      body: async () => {
        const body = await this.cache.catalogueWide(
          `skills|${where}|${JSON.stringify(query)}`,
          revision,
          async () => {
            const page = await this.catalogueItems(scope, query);
            return jsonBody(catalogueResponseSchema, {
              items: page.items.map(({ frontmatter: _frontmatter, ...item }) => ({
                ...item,
                updatedAt: item.updatedAt.toISOString(),
              })),
              nextCursor: page.nextCursor,
            });
          },
          true,
        );
        return { payload: body };
      },
    };
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
    const revision = await this.cache.scopeRevision(scope);
    const key = `search|${scopeKey(scope)}|${JSON.stringify(shape)}`;
    return {
      etag: revisionEtag(revision, 'search', scopeKey(scope), shape),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'scope', scope, revision },
      body: async () => {
        const body = await this.cache.catalogueWide(
          key,
          revision,
          async () => {
            const results = await this.search.searchSkills(scope, { ...request, query });
            this.searchedNames.set(
              key,
              results.map((result) => result.name),
            );
            return jsonBody(searchResponseSchema, { query, results });
          },
          true,
        );
        return { payload: body };
      },
      // Each answer sent, cached or not, is a search a later load by the same client may follow.
      onBody: (client) => this.search.noteSearch(client, query, this.searchedNames.get(key) ?? []),
    };
  }

  /**
   * One page of catalogue items with their frontmatter (what visibility rules read): by name, or with
   * `q` the search's ranking, best first, each item with its match.
   */
  catalogueItems(
    scope: Scope,
    query: CatalogueQuery,
  ): Promise<{
    items: (CatalogueItem & { match?: SearchMatch; namespace?: string })[];
    nextCursor: string | null;
  }> {
    const q = query.q?.trim();
    if (q) return this.search.cataloguePage(scope, { ...query, q });
    if (scope.kind === 'view') return this.viewCatalogue(scope, query);
    return this.catalogue.catalogue({ ...query, namespace: scope.namespace });
  }

  /**
   * A page of a view's catalogue, by name: each layer's next page after the cursor, and per name the
   * highest layer's item. A name among the page's first `limit` is among the first `limit` of every
   * layer that has it, so one page per layer suffices.
   */
  private async viewCatalogue(
    scope: Scope,
    query: CatalogueQuery,
  ): Promise<{ items: (CatalogueItem & { namespace: string })[]; nextCursor: string | null }> {
    const layers = layersOf(scope);
    const pages = await Promise.all(
      layers.map((namespace) => this.catalogue.catalogue({ ...query, namespace })),
    );
    const winners = new Map<string, CatalogueItem & { namespace: string }>();
    pages.forEach((page, layer) => {
      for (const item of page.items) winners.set(item.name, { ...item, namespace: layers[layer]! });
    });
    const merged = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const items = merged.slice(0, query.limit);
    const more = merged.length > query.limit || pages.some((page) => page.nextCursor !== null);
    return { items, nextCursor: more && items.length > 0 ? encodeCatalogueCursor(items.at(-1)!.name) : null };
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
    const key = skillKey(namespace, record.name);
    const immutable = selector.version !== undefined;
    if (scope.kind === 'view') {
      const viewRevision = this.cache.state.scopeRevision(scope);
      const body = await this.cache.catalogueWide(
        `detail|${scopeKey(scope)}|${name}|${JSON.stringify(query)}`,
        viewRevision,
        async () =>
          jsonBody(skillDetailSchema, {
            ...(await this.detailDocument(record)),
            namespace,
            resolvedFrom: namespace,
            shadows: await this.resolver.shadowed(scope, resolved),
          }),
        true,
      );
      return {
        etag: revisionEtag(viewRevision, 'skill', scopeKey(scope), name, query),
        immutable,
        contentType: JSON_CONTENT_TYPE,
        validity: { kind: 'scope', scope, revision: viewRevision },
        body: bodyOf(body),
      };
    }
    // Dist-tags and versions change with every write to the skill, even for an exact version.
    const body = await this.cache.perSkill(
      key,
      `detail|${record.id}|${record.yankedAt?.getTime() ?? ''}`,
      revision,
      async () => jsonBody(skillDetailSchema, { ...(await this.detailDocument(record)), namespace }),
      true,
    );
    return {
      // The namespace's revision: a write elsewhere leaves the ETag alone.
      etag: revisionEtag(
        this.cache.state.scopeRevision({ kind: 'namespace', namespace }),
        'skill',
        key,
        query,
      ),
      immutable,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'skill', skill: key, revision },
      body: bodyOf(body),
    };
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
    const revision = await this.cache.revision();
    const { namespace } = await this.holder(scope, name);
    const key = skillKey(namespace, name);
    const viewRevision = scope.kind === 'view' ? this.cache.state.scopeRevision(scope) : undefined;
    return {
      etag:
        viewRevision === undefined
          ? revisionEtag(this.cache.state.scopeRevision({ kind: 'namespace', namespace }), 'versions', key)
          : revisionEtag(viewRevision, 'versions', scopeKey(scope), name),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity:
        viewRevision === undefined
          ? { kind: 'skill', skill: key, revision }
          : { kind: 'scope', scope, revision: viewRevision },
      body: async () => {
        const body = await this.cache.perSkill(
          key,
          'versions',
          revision,
          async () =>
            jsonBody(
              versionsResponseSchema,
              (await this.versions({ kind: 'namespace', namespace }, name)).map((summary) => ({
                ...summary,
                createdAt: summary.createdAt.toISOString(),
              })),
            ),
          true,
        );
        return { payload: body };
      },
    };
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
    const variant =
      argumentString === undefined ? rendering : `${rendering}.a${argumentsFingerprint(argumentString)}`;
    const headers = { 'x-skill-version': record.version };
    return {
      etag: digestEtag(record.digest, variant),
      immutable: resolved.selector.version !== undefined,
      contentType: CONTENT_TYPES[format],
      // Answers with arguments are not repeated: the argument strings are unbounded.
      ...(argumentString === undefined ? { validity: this.validity(scope, resolved) } : {}),
      onBody: (client) => this.recordLoad(resolved, client),
      body: async () => {
        if (argumentString !== undefined) {
          return { payload: await this.substituted(record, format, argumentString), headers };
        }
        // The cached record holds the body already: sent as it is rather than kept a second time.
        if (format === 'markdown') return { payload: record.body, headers };
        // Other renderings depend on the version alone: kept serialised.
        const rendered = await this.cache.immutable(
          `content|${record.id}|${format}`,
          async () =>
            format === 'xml'
              ? bufferBody(renderSkillXml(record.name, record.body))
              : jsonBody(contentJsonSchema, await this.contentDocument(record, record.body)),
          true,
        );
        return { payload: rendered, headers };
      },
    };
  }

  /** One bundled file (layer 3): the path refused unless it is a valid bundle path, then looked up. */
  file(record: VersionRecord, rawPath: string): Promise<StoredFile> {
    return this.storedFile(record, bundlePathOf(rawPath));
  }

  /** A file by its canonical path (bundlePathOf ran on it). */
  private storedFile(record: VersionRecord, path: string): Promise<StoredFile> {
    // A file of a version never changes; a large one is served without being kept (maxEntryBytes).
    return this.cache.immutable(
      `file|${record.id}|${path}`,
      async () => {
        const stored = await this.skills.readFile(record.id, path);
        if (!stored) {
          const paths = (await this.skills.files(record.id)).map((file) => file.path);
          throw unknownFile(record, path, paths);
        }
        const { value } = bufferBody(stored.bytes);
        return {
          value: {
            path,
            bytes: value,
            digest: stored.digest,
            contentType: contentTypeFor(path, stored.bytes),
          },
          bytes: value.byteLength + path.length * 2 + 200,
        };
      },
      true,
    );
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
    return {
      etag: digestEtag(file.digest),
      immutable: selector.version !== undefined,
      contentType: file.contentType,
      // SKILL.md is the skill itself (a load, as over MCP); any other file is layer 3.
      onBody:
        path === 'SKILL.md'
          ? (client) => this.recordLoad(resolved, client)
          : () => this.recordUse(resolved, 'files'),
      validity: this.validity(scope, resolved),
      body: bodyOf(file.bytes, {
        // Bundled HTML or SVG must not run as this registry's origin.
        'content-security-policy': "default-src 'none'; sandbox",
        'x-content-type-options': 'nosniff',
        'x-skill-version': resolved.record.version,
      }),
    };
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
