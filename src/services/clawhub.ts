import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { clawhubFingerprint } from '../bundle/clawhub-fingerprint.js';
import { installableFiles } from '../bundle/installable-skill-md.js';
import type { Scope } from '../domain/scope.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type {
  clawhubListResponseSchema,
  clawhubResolveResponseSchema,
  clawhubSearchResponseSchema,
  clawhubSkillResponseSchema,
  clawhubVersionResponseSchema,
  clawhubVersionsResponseSchema,
} from '../wire/clawhub.js';
import type { InstalledVersionService } from './installed-versions.js';
import type { SkillReadService, VersionSummary } from './skill-reads.js';
import type { SkillSearchService } from './skill-search.js';

/**
 * The ClawHub-compatible read API: the registry's own reads (the one listing, the one search, the one
 * resolution) mapped to what the `clawhub` CLI asks. Installs download the registry's installable zip,
 * so `clawhub install` writes the same files every other installer gets.
 */

const time = (date: Date | string) => new Date(date).getTime();

export class ClawHubService {
  constructor(
    private readonly reads: SkillReadService,
    private readonly search: SkillSearchService,
    private readonly skills: SkillsRepository,
    private readonly installed: InstalledVersionService,
  ) {}

  async searchSkills(
    scope: Scope,
    query: string,
    limit: number,
  ): Promise<z.output<typeof clawhubSearchResponseSchema>> {
    const results = await this.search.searchSkills(scope, { query, limit });
    return {
      results: results.map((result) => ({
        slug: result.name,
        displayName: result.name,
        summary: result.description,
        version: result.version,
        score: result.score,
        ownerHandle: result.namespace ?? namespaceOf(scope),
      })),
    };
  }

  async list(
    scope: Scope,
    query: { limit: number; cursor?: string; prefix?: string },
  ): Promise<z.output<typeof clawhubListResponseSchema>> {
    const page = await this.reads.listing.page(scope, {
      limit: query.limit,
      ...(query.cursor ? { cursor: query.cursor } : {}),
      ...(query.prefix ? { q: query.prefix } : {}),
      audience: 'people',
    });
    return {
      items: page.items.map((item) => ({
        slug: item.name,
        displayName: item.name,
        summary: item.description,
        tags: Object.fromEntries(item.tags.map((tag) => [tag, item.version])),
        stats: {},
        createdAt: time(item.updatedAt),
        updatedAt: time(item.updatedAt),
        latestVersion: { version: item.version, createdAt: time(item.updatedAt), changelog: '' },
      })),
      nextCursor: page.nextCursor ?? null,
    };
  }

  async skill(scope: Scope, slug: string): Promise<z.output<typeof clawhubSkillResponseSchema>> {
    const { record, namespace } = await this.reads.resolve(scope, slug, {});
    const [versions, tags] = await Promise.all([
      this.reads.versions(scope, slug),
      this.skills.distTags(record.skillId),
    ]);
    const oldest = versions.at(-1)?.createdAt ?? record.createdAt;
    return {
      skill: {
        slug: record.name,
        displayName: record.name,
        summary: record.description,
        tags,
        stats: {},
        createdAt: time(oldest),
        updatedAt: time(versions[0]?.createdAt ?? record.createdAt),
      },
      latestVersion: { version: record.version, createdAt: time(record.createdAt), changelog: '' },
      owner: { handle: namespace, displayName: namespace },
      moderation: null,
    };
  }

  async versions(scope: Scope, slug: string): Promise<z.output<typeof clawhubVersionsResponseSchema>> {
    const versions = (await this.reads.versions(scope, slug)).filter((version) => !version.yanked);
    return { items: versions.map(versionEntry), nextCursor: null };
  }

  async version(
    scope: Scope,
    slug: string,
    version: string,
  ): Promise<z.output<typeof clawhubVersionResponseSchema>> {
    const { record } = await this.reads.resolve(scope, slug, { version });
    const installed = installableFiles(
      await this.skills.bundleFiles(record.id),
      record.name,
      record.description,
    ).files;
    return {
      version: {
        version: record.version,
        createdAt: time(record.createdAt),
        changelog: '',
        files: installed.map((file) => ({
          path: file.path,
          size: file.bytes.byteLength,
          sha256: createHash('sha256').update(file.bytes).digest('hex'),
        })),
      },
      skill: { slug: record.name, displayName: record.name },
    };
  }

  /**
   * Which version an installed folder is, from the fingerprint the CLI computed over it: each version's
   * files as installed (git's copy of them: the CLI leaves out every dot folder, .git included).
   */
  async resolveFingerprint(
    scope: Scope,
    slug: string,
    hash: string,
  ): Promise<z.output<typeof clawhubResolveResponseSchema>> {
    const { record } = await this.reads.resolve(scope, slug, {});
    const line = await this.reads.versionLine(scope, slug);
    // Newest first: an installed folder is most likely a recent version.
    const newestFirst = [...line.versions].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const installed = await this.installed.manyWithFiles(newestFirst.map((row) => row.id));
    const at = installed.findIndex((version) => clawhubFingerprint(version.commit.files) === hash);
    const match = at >= 0 ? newestFirst[at]!.version : null;
    return { match: match ? { version: match } : null, latestVersion: { version: record.version } };
  }
}

function versionEntry(version: VersionSummary) {
  return { version: version.version, createdAt: time(version.createdAt), changelog: '' };
}

function namespaceOf(scope: Scope): string {
  return scope.kind === 'namespace' ? scope.namespace : '';
}
