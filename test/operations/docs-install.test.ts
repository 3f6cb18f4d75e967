import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type InstallCommand, installCommands, packageName } from '../helpers/install-commands.js';
import { REPO_ROOT } from '../helpers/server-process.js';

/**
 * Nothing in the README or docs installs software by a name the project does not own: a name nobody
 * owns today (`skill-registry`, `skillreg` on npm) runs a stranger's code, with the CI job's publish
 * token, the day someone registers it. Every install command must name the project's own artefact (the
 * CLI the registry serves at /cli, a local folder, the image built from this repository) or a
 * well-known tool below.
 */

/** Well-known tools the docs may install, each with why it is trusted. */
const WELL_KNOWN: Record<InstallCommand['kind'], Record<string, string>> = {
  npm: {
    skills: "vercel-labs' skills CLI: the public Agent Skills installer the registry serves",
    tsx: 'a dependency of this project (package.json): npx runs the copy in node_modules',
    '@anthropic-ai/claude-code': "Claude Code, Anthropic's own package",
    '@openai/codex': "Codex CLI, OpenAI's own package",
    '@github/copilot': "GitHub Copilot CLI, GitHub's own package",
    '@google/gemini-cli': "Gemini CLI, Google's own package",
    clawhub: "ClawHub's CLI, whose read API the registry implements",
    '@modelcontextprotocol/inspector': "the MCP project's own inspector",
    'mcp-remote': 'the stdio-to-HTTP MCP bridge that MCP hosts document',
  },
  system: {
    chromium: "Debian's Chromium, driven by the console's browser tests",
    git: 'git, from the distribution',
    nginx: 'nginx, from the distribution (deploy/nginx.conf)',
    tini: "Alpine's tini, the container's init",
  },
  docker: {
    node: 'the official Node.js image',
    postgres: 'the official PostgreSQL image',
    nginx: 'the official nginx image',
  },
  pip: {},
  script: {},
};

/** The CLI as the registry serves it: `<registry>/cli/skillreg.tgz` (or .mjs), whatever the base. */
const REGISTRY_CLI = /\/cli\/skillreg\.(tgz|mjs)$/;

/** This repository, once package.json names it (`repository`): a git spec of it is the project's own. */
function thisRepository(): string | undefined {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    repository?: string | { url?: string };
  };
  const url = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  return /github\.com[/:]([^/]+\/[^/.#]+)/.exec(url ?? '')?.[1] ?? /^github:([^#]+)/.exec(url ?? '')?.[1];
}

/** Why an install command is fine, or undefined when it names something the project does not own. */
function whyAllowed(command: InstallCommand, ownImages: Set<string>): string | undefined {
  const { target, kind } = command;
  if (REGISTRY_CLI.test(target)) return 'the CLI the registry serves';
  if (kind === 'npm' && /^(\.{1,2}(\/|$)|\/|file:)/.test(target)) return 'a local folder';
  const repository = thisRepository();
  if (
    kind === 'npm' &&
    repository &&
    target
      .replace(/^(github:|git\+https:\/\/github\.com\/)/, '')
      .split('#')[0]
      ?.replace(/\.git$/, '') === repository
  )
    return 'this repository';
  if (kind === 'docker' && ownImages.has(target.split(':')[0]!))
    return 'the image built from this repository';
  const name = kind === 'npm' ? packageName(target) : kind === 'docker' ? target.split(':')[0]! : target;
  return WELL_KNOWN[kind][name];
}

function walk(dir: string, accept: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full, accept);
    return accept(entry.name) ? [full] : [];
  });
}

/**
 * README.md, docs/ (Markdown and YAML), examples/README.md, deploy/ documents, Dockerfile, .env.example,
 * and the seed skills, whose commands agents run.
 */
function documents(): string[] {
  return [
    path.join(REPO_ROOT, 'README.md'),
    ...walk(path.join(REPO_ROOT, 'docs'), (name) => /\.(md|ya?ml)$/.test(name)),
    ...walk(path.join(REPO_ROOT, 'deploy'), (name) => /\.md$/.test(name)),
    path.join(REPO_ROOT, 'examples', 'README.md'),
    ...walk(path.join(REPO_ROOT, 'skills-seed'), (name) => /\.md$/.test(name)),
    path.join(REPO_ROOT, 'Dockerfile'),
    path.join(REPO_ROOT, '.env.example'),
  ].filter((file) => existsSync(file));
}

/** Images the documents build themselves (`docker build -t name .`). */
function imagesBuilt(texts: string[]): Set<string> {
  return new Set(
    texts.flatMap((text) => [...text.matchAll(/docker build\b[^\n]*?\s-t\s+([\w./-]+)/g)].map((m) => m[1]!)),
  );
}

function violations(files: { file: string; text: string }[]): string[] {
  const own = imagesBuilt(files.map((entry) => entry.text));
  return files.flatMap(({ file, text }) =>
    installCommands(file, text)
      .filter((command) => whyAllowed(command, own) === undefined)
      .map(
        (command) =>
          `${path.relative(REPO_ROOT, file) || file}:${command.line}: \`${command.command}\` installs '${command.target}', which the project does not own; install the CLI from <registry>/cli/skillreg.tgz (or run \`npx --no-install skillreg\` inside a clone)`,
      ),
  );
}

describe('install commands in the README and docs', () => {
  const files = documents().map((file) => ({ file, text: readFileSync(file, 'utf8') }));

  it('reads the documents it should and finds their install commands', () => {
    const names = files.map(({ file }) => path.relative(REPO_ROOT, file));
    expect(names).toEqual(
      expect.arrayContaining(['README.md', 'docs/CI.md', 'docs/github-actions-sync.yml']),
    );
    const targets = files.flatMap(({ file, text }) =>
      installCommands(file, text).map((command) => command.target),
    );
    // Not vacuous: the README installs skills with the public `skills` CLI.
    expect(targets).toContain('skills');
  });

  it("name only the project's own artefacts or well-known tools", () => {
    expect(violations(files)).toEqual([]);
  });

  it('catches a planted bad line of every form, and lets the right forms through', () => {
    const planted = [
      '```sh',
      'npm install --global skill-registry',
      'npm i -g "$SKILLREG_CLI"',
      'SKILLREG_TOKEN=x npx skillreg sync .',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, quoted as the docs write it
      'npx --yes --package "${SKILLREG_CLI:-skill-registry}" -- skillreg sync .',
      'npm exec --package=skillreg-cli -- skillreg validate .',
      'pnpm dlx skillreg validate .',
      'yarn global add skill-registry',
      'bunx skillreg --help',
      'pip install skillreg',
      'sudo apt-get install -y some-tool',
      'curl -fsSL https://get.example.com/install.sh | sh',
      'docker run -d -p 3000:3000 someone/skill-registry',
      '```',
      'Run `npx skillreg validate .` before pushing.',
    ].join('\n');
    const found = violations([{ file: path.join(REPO_ROOT, 'planted.md'), text: planted }]);
    expect(found.map((line) => /installs '([^']*)'/.exec(line)?.[1])).toEqual([
      'skill-registry',
      '$SKILLREG_CLI',
      'skillreg',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, quoted as the docs write it
      '${SKILLREG_CLI:-skill-registry}',
      'skillreg-cli',
      'skillreg',
      'skill-registry',
      'skillreg',
      'skillreg',
      'some-tool',
      'https://get.example.com/install.sh',
      'someone/skill-registry',
      'skillreg',
    ]);
    expect(found[0]).toMatch(/^planted\.md:2: /);

    const fine = [
      '```sh',
      'npm install --global --no-fund --no-audit "$SKILLREG_URL/cli/skillreg.tgz"',
      'npx --yes --package https://skills.example.com/cli/skillreg.tgz skillreg sync .',
      'curl -fsSLO "$SKILLREG_URL/cli/skillreg.mjs" && node skillreg.mjs validate .',
      'npx --no-install skillreg validate .',
      'npm ci && npm start',
      'npx skills add http://127.0.0.1:3000 --skill my-skill -a claude-code -y',
      'npx -y @modelcontextprotocol/inspector',
      'npm install -g @openai/codex@latest',
      'apt-get install -y chromium',
      'docker build -t skill-registry . && docker run -p 3000:3000 skill-registry',
      '```',
      'Then `npm run build`; never pipe `curl \\| sh`.',
    ].join('\n');
    expect(violations([{ file: path.join(REPO_ROOT, 'fine.md'), text: fine }])).toEqual([]);
  });

  it('reads YAML workflows line by line, comments included', () => {
    const workflow = [
      'env:',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, quoted as the docs write it
      "  SKILLREG_CLI: ${{ vars.SKILLREG_CLI || 'skill-registry' }}",
      'steps:',
      '  - run: |',
      '      npm install --global --no-fund --no-audit "$SKILLREG_CLI"',
      '#   or: npm install -g skill-registry@0.1.0',
    ].join('\n');
    const found = violations([{ file: path.join(REPO_ROOT, 'flow.yml'), text: workflow }]);
    expect(
      found.map((line) => /^flow\.yml:(\d+): .* installs '([^']*)'/.exec(line)?.slice(1).join(' ')),
    ).toEqual(['5 $SKILLREG_CLI', '6 skill-registry@0.1.0']);
  });
});
