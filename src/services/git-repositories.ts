import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { sortVersionsDescending } from '../bundle/version.js';
import { type Scope, scopePath } from '../domain/scope.js';
import { type GitHttpAnswer, type GitHttpRequest, gitHttpBackend } from '../git/http-backend.js';
import {
  httpMarketplace,
  type MarketplacePlugin,
  marketplaceName,
  pluginSkillFolder,
  pluginsRepositoryManifests,
} from '../git/marketplaces.js';
import { commitOf, type GitFile, type GitSubtree } from '../git/objects.js';
import { buildRepository } from '../git/repository-builder.js';
import type { RepositoryCache } from '../git/repository-cache.js';
import { REGISTRY_SIGNATURE } from '../git/version-commit.js';
import { jsonBody } from '../render/response-bodies.js';
import { claudeMarketplaceSchema } from '../wire/agents.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import type { InstalledVersionService } from './installed-versions.js';
import type { SkillReadService } from './skill-reads.js';

/**
 * The read-only git repositories hosts install from (`{scope}/git/skills/{name}.git`): per skill, a tag
 * `v<version>` on every servable version (yanked ones keep theirs), a branch per dist-tag, HEAD on
 * `latest`. Each version is one parentless commit whose id depends only on the version
 * (src/git/version-commit.ts), so refs are the same on every replica and after a rebuild; the repository
 * is built from the database when first asked for and kept on disk by its content (RepositoryCache).
 */

export interface RepositoryRefs {
  /** Digest of the refs and HEAD: the repository's content key. */
  key: string;
  /** Full ref name to commit id. */
  refs: Map<string, string>;
  head: string;
}

export interface PluginsRepository extends RepositoryRefs {
  plugins: (MarketplacePlugin & { versionId: string; tree: string })[];
  /** The commit's time: when the newest of its plugins' versions became current. */
  updatedSeconds: number;
}

/** A plugins.git build after this many incremental ones starts afresh (see buildPlugins). */
const FRESH_BUILD_EVERY = 20;

export interface SkillRepository extends RepositoryRefs {
  name: string;
  namespace: string;
  /** The versions behind the tags, by id. */
  versionIds: string[];
}

/** Git ref names the registry's tags and versions map to; anything git would refuse is left out. */
const REF_COMPONENT = /^(?!\.)(?!.*\.\.)(?!.*\.lock$)[A-Za-z0-9._+-]+(?<!\.)$/;

export function refsKey(kind: string, refs: ReadonlyMap<string, string>, head: string): string {
  const hash = createHash('sha256').update(`${kind}\nHEAD ${head}\n`);
  for (const ref of [...refs.keys()].sort()) hash.update(`${ref} ${refs.get(ref)}\n`);
  return hash.digest('hex').slice(0, 40);
}

export class GitRepositoryService {
  /** The last plugins.git each scope was built as in this process: what the next build may graft. */
  private readonly lastPlugins = new Map<string, { key: string; trees: Set<string>; generation: number }>();

  constructor(
    private readonly reads: SkillReadService,
    private readonly installed: InstalledVersionService,
    private readonly cache: RepositoryCache,
  ) {}

  /** The refs of a skill's repository in a scope (404 for an unknown or wholly unservable skill). */
  async skillRepository(scope: Scope, name: string): Promise<SkillRepository> {
    const line = await this.reads.versionLine(scope, name);
    const identities = await this.installed.identities(line.versions.map((version) => version.id));
    const refs = new Map<string, string>();
    const versionIds: string[] = [];
    // Oldest first, so that a clone lists tags in version order whatever the database returned.
    const order = sortVersionsDescending(line.versions.map((version) => version.version)).reverse();
    const byVersion = new Map(line.versions.map((version) => [version.version, version]));
    for (const version of order.map((number) => byVersion.get(number)!)) {
      if (!REF_COMPONENT.test(`v${version.version}`)) continue;
      refs.set(`refs/tags/v${version.version}`, identities.get(version.id)!.gitCommit);
      versionIds.push(version.id);
    }
    for (const { tag, versionId } of line.tags) {
      const commit = identities.get(versionId)?.gitCommit;
      if (commit && REF_COMPONENT.test(tag)) refs.set(`refs/heads/${tag}`, commit);
    }
    const head = 'refs/heads/latest';
    return {
      name: line.name,
      namespace: line.namespace,
      versionIds,
      refs,
      head,
      key: refsKey(`skill ${line.namespace}/${line.name}`, refs, head),
    };
  }

  /** Answers a smart-HTTP request for `repository`, building it first when it is not on disk. */
  async serveSkill(
    repository: SkillRepository,
    request: Omit<GitHttpRequest, 'repository' | 'body'> & { body?: Readable },
  ): Promise<GitHttpAnswer> {
    return this.serveBuilt(
      `skill-${repository.key}`,
      (directory) => this.buildSkill(repository, directory),
      request,
    );
  }

  /** The scope's plugins: each current skill (as the listing has it) at its `latest`, with its commit. */
  async marketplacePlugins(
    scope: Scope,
  ): Promise<(MarketplacePlugin & { versionId: string; tree: string; updatedSeconds: number })[]> {
    const items = (await this.reads.listing.all(scope)).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const identities = await this.installed.identities(items.map((item) => item.versionId));
    return items.map((item) => {
      const identity = identities.get(item.versionId)!;
      return {
        name: item.name,
        description: item.description,
        version: item.version,
        commit: identity.gitCommit,
        tree: identity.gitTree,
        versionId: item.versionId,
        updatedSeconds: Math.floor(new Date(item.updatedAt).getTime() / 1000),
      };
    });
  }

  /** `{scope}/marketplace.json` for Claude Code, links under `origin`; an ETag per scope revision. */
  async httpMarketplace(scope: Scope, origin: string): Promise<Answer> {
    const read = await this.reads.cached.of({
      read: 'marketplace',
      on: { kind: 'scope', scope },
      shape: [origin],
    });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () => {
        const plugins = await this.marketplacePlugins(scope);
        const base = `${origin}${scopePath(scope)}/git/skills`;
        return jsonBody(
          claudeMarketplaceSchema,
          httpMarketplace(scope, (name) => `${base}/${name}.git`, plugins) as z.output<
            typeof claudeMarketplaceSchema
          >,
        );
      },
    });
  }

  /**
   * The content of `{scope}/git/plugins.git` (one branch, `main`, on one commit of every plugin), kept
   * per scope revision: an unchanged scope costs a ref advertisement, not a listing.
   */
  async pluginsRepository(scope: Scope): Promise<PluginsRepository> {
    const read = await this.reads.cached.of({
      read: 'plugins-repository',
      on: { kind: 'scope', scope },
      shape: [],
    });
    return read.value(async () => {
      const value = await this.pluginsContent(scope);
      return { value, bytes: 200 + value.plugins.length * 400 };
    });
  }

  private async pluginsContent(scope: Scope): Promise<PluginsRepository> {
    const plugins = await this.marketplacePlugins(scope);
    const manifests = pluginsRepositoryManifests(scope, plugins);
    // The content key: the manifests and each plugin's skill tree (its files are the version's).
    const hash = createHash('sha256');
    for (const manifest of manifests) hash.update(`${manifest.path}\n${manifest.text}\n`);
    const updatedSeconds = plugins.reduce((newest, plugin) => Math.max(newest, plugin.updatedSeconds), 0);
    for (const plugin of plugins) hash.update(`${plugin.name} ${plugin.tree}\n`);
    hash.update(`at ${updatedSeconds}\n`);
    const key = hash.digest('hex').slice(0, 40);
    return { key, refs: new Map(), head: 'refs/heads/main', plugins, updatedSeconds };
  }

  /** Answers a smart-HTTP request for `{scope}/git/plugins.git`. */
  async servePlugins(
    scope: Scope,
    request: Omit<GitHttpRequest, 'repository' | 'body'> & { body?: Readable },
  ): Promise<GitHttpAnswer> {
    const repository = await this.pluginsRepository(scope);
    return this.serveBuilt(
      `plugins-${repository.key}`,
      (directory) => this.buildPlugins(scope, repository, directory),
      request,
    );
  }

  /**
   * Writes plugins.git. When this process built the scope's repository before and it is still on disk,
   * its objects are linked in and every plugin whose skill tree it already holds is grafted by tree id:
   * only the skills that changed are read and written. Every so many builds one starts afresh, so the
   * objects of skills long gone do not pile up.
   */
  private async buildPlugins(scope: Scope, repository: PluginsRepository, directory: string): Promise<void> {
    const scopeId = `${scope.kind}:${scope.kind === 'view' ? scope.view : scope.namespace}`;
    const previous = this.lastPlugins.get(scopeId);
    const held =
      previous && previous.generation < FRESH_BUILD_EVERY
        ? this.cache.peek(`plugins-${previous.key}`)
        : undefined;
    try {
      const grafted = held ? previous!.trees : new Set<string>();
      const toRead = repository.plugins.filter((plugin) => !grafted.has(plugin.tree));
      const read = new Map(
        (await this.installed.manyWithFiles(toRead.map((plugin) => plugin.versionId))).map(
          (version, index) => [toRead[index]!.versionId, version],
        ),
      );
      const files: GitFile[] = pluginsRepositoryManifests(scope, repository.plugins).map((manifest) => ({
        path: manifest.path,
        bytes: Buffer.from(manifest.text, 'utf8'),
        executable: false,
      }));
      const trees: GitSubtree[] = [];
      for (const plugin of repository.plugins) {
        const version = read.get(plugin.versionId);
        if (!version) {
          trees.push({ path: pluginSkillFolder(plugin.name), id: plugin.tree });
          continue;
        }
        for (const file of version.commit.files) {
          files.push({ ...file, path: `${pluginSkillFolder(plugin.name)}/${file.path}` });
        }
      }
      const author = { ...REGISTRY_SIGNATURE, seconds: repository.updatedSeconds };
      const message = `${marketplaceName(scope)}: ${repository.plugins.length} plugins\n`;
      const commit = commitOf({ files, trees, author, message });
      await buildRepository(
        directory,
        {
          commits: [{ id: commit.id, files, trees, author, message }],
          refs: new Map([[repository.head, commit.id]]),
          head: repository.head,
        },
        held ? { objectsFrom: held.directory } : {},
      );
      this.lastPlugins.set(scopeId, {
        key: repository.key,
        trees: new Set(repository.plugins.map((plugin) => plugin.tree)),
        generation: held ? previous!.generation + 1 : 0,
      });
    } finally {
      held?.release();
    }
  }

  private async serveBuilt(
    key: string,
    build: (directory: string) => Promise<void>,
    request: Omit<GitHttpRequest, 'repository' | 'body'> & { body?: Readable },
  ): Promise<GitHttpAnswer> {
    const held = await this.cache.hold(key, build);
    try {
      const answer = await gitHttpBackend({ ...request, repository: held.directory });
      answer.body.once('close', held.release);
      return answer;
    } catch (error) {
      held.release();
      throw error;
    }
  }

  private async buildSkill(repository: SkillRepository, directory: string): Promise<void> {
    const versions = await this.installed.manyWithFiles(repository.versionIds);
    await buildRepository(directory, {
      commits: versions.map(({ commit }) => ({
        id: commit.commitId,
        files: commit.files,
        author: commit.author,
        message: commit.message,
      })),
      refs: repository.refs,
      head: repository.head,
    });
  }
}
