import { DEFAULT_NAMESPACE, type Scope } from '../domain/scope.js';

/**
 * The plugin marketplaces agent hosts read, as documents (pure): one plugin per skill, its `latest`.
 * Claude Code reads `.claude-plugin/marketplace.json`, Codex `.agents/plugins/marketplace.json` and
 * GitHub Copilot CLI `.github/plugin/marketplace.json`; `{scope}/marketplace.json` is Claude Code's over
 * plain HTTP, each plugin a git source pinned by ref and commit. docs/agent-hosts-research.md records
 * what each host was seen to read.
 */

export interface MarketplacePlugin {
  name: string;
  description: string;
  version: string;
  /** The version's commit in `{scope}/git/skills/{name}.git` (src/git/version-commit.ts). */
  commit: string;
}

const OWNER = { name: 'skill-registry' };

/** The marketplace's name: stable per scope, the part after `@` in `claude plugin install NAME@MARKETPLACE`. */
export function marketplaceName(scope: Scope): string {
  if (scope.kind === 'view') return `skill-registry-view-${scope.view}`;
  return scope.namespace === DEFAULT_NAMESPACE ? 'skill-registry' : `skill-registry-ns-${scope.namespace}`;
}

function describeScope(scope: Scope): string {
  if (scope.kind === 'view') return `Skills of the view '${scope.view}' of a skill registry`;
  return scope.namespace === DEFAULT_NAMESPACE
    ? 'Skills of a skill registry'
    : `Skills of the namespace '${scope.namespace}' of a skill registry`;
}

/**
 * `{scope}/marketplace.json`: plugins whose source is the skill's own repository at its version's tag
 * and commit. The repository's root is the skill's folder, so the entry declares the plugin root itself
 * as the skill directory (`strict: false`, `skills: ["./"]`): nothing is added to the skill's files.
 */
export function httpMarketplace(
  scope: Scope,
  repositoryUrl: (name: string) => string,
  plugins: readonly MarketplacePlugin[],
) {
  return {
    name: marketplaceName(scope),
    owner: OWNER,
    metadata: { description: describeScope(scope) },
    plugins: plugins.map((plugin) => ({
      name: plugin.name,
      description: plugin.description,
      version: plugin.version,
      source: {
        source: 'url',
        url: repositoryUrl(plugin.name),
        ref: `v${plugin.version}`,
        sha: plugin.commit,
      },
      strict: false,
      skills: ['./'],
    })),
  };
}

/** Where a plugin's folder is in `{scope}/git/plugins.git`, and its skill inside it. */
export const pluginFolder = (name: string) => `plugins/${name}`;
export const pluginSkillFolder = (name: string) => `plugins/${name}/skills/${name}`;

/** The files of `plugins.git` besides the skills' own: the three hosts' manifests and each plugin.json. */
export function pluginsRepositoryManifests(
  scope: Scope,
  plugins: readonly MarketplacePlugin[],
): { path: string; text: string }[] {
  const name = marketplaceName(scope);
  const description = describeScope(scope);
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const relative = (plugin: MarketplacePlugin) => `./${pluginFolder(plugin.name)}`;
  const listed = (plugin: MarketplacePlugin) => ({
    name: plugin.name,
    description: plugin.description,
    version: plugin.version,
    source: relative(plugin),
  });
  return [
    {
      path: '.claude-plugin/marketplace.json',
      text: json({ name, owner: OWNER, metadata: { description }, plugins: plugins.map(listed) }),
    },
    {
      path: '.agents/plugins/marketplace.json',
      text: json({
        name,
        interface: { displayName: description },
        plugins: plugins.map((plugin) => ({
          name: plugin.name,
          source: { source: 'local', path: relative(plugin) },
          policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' },
        })),
      }),
    },
    {
      path: '.github/plugin/marketplace.json',
      text: json({ name, owner: OWNER, metadata: { description }, plugins: plugins.map(listed) }),
    },
    ...plugins.map((plugin) => ({
      // Codex needs a plugin.json; Claude Code and Copilot read the same file.
      path: `${pluginFolder(plugin.name)}/.claude-plugin/plugin.json`,
      text: json({ name: plugin.name, version: plugin.version, description: plugin.description }),
    })),
  ];
}
