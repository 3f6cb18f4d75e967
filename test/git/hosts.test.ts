import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installableFiles } from '../../src/bundle/installable-skill-md.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { files, uniqueName } from '../helpers/bundles.js';
import { putView } from '../helpers/context.js';
import { type LiveApp, liveApp, publishTarball } from '../helpers/live-app.js';

/**
 * The agent hosts' own CLIs (pinned in .ci/run, offline with a fresh HOME) install a published skill
 * from a view through every form the registry serves, and their own update commands bring the next
 * version: Claude Code (marketplace.json and plugins.git), Codex and Copilot CLI (plugins.git), Gemini
 * CLI and the skills CLI (the skill's own repository). Installed files are compared byte for byte with
 * what the registry serves.
 */

const HOSTS_BIN = process.env.SKILLREG_HOSTS_BIN;
const NODE22 = process.env.SKILLS_CLI_NODE;
const SKILLS_CLI = process.env.SKILLS_CLI_BIN;
const GEMINI = process.env.SKILLREG_GEMINI_BIN;
const enabled = Boolean(
  HOSTS_BIN && NODE22 && SKILLS_CLI && GEMINI && existsSync(path.join(HOSTS_BIN, 'copilot')),
);
if (!enabled) {
  console.warn(
    '[hosts] skipped: set SKILLREG_HOSTS_BIN (claude, codex, copilot), SKILLS_CLI_NODE, SKILLS_CLI_BIN and SKILLREG_GEMINI_BIN as .ci/run does',
  );
}

const run = promisify(execFile);

let ctx: LiveApp;
let view: string;
let base: string;

const DESCRIPTION = 'Installs into every agent host.';

function bundleOf(skill: string, body: string): BundleFile[] {
  const bundle = files({
    // No name in the frontmatter: installers get it written in.
    'SKILL.md': `---\ndescription: ${DESCRIPTION}\n---\n# ${skill}\n\n${body}\n`,
    'references/données/guide.md': '# Guide ✓\r\n',
    'scripts/go.sh': '#!/bin/sh\necho go\n',
  });
  bundle.find((file) => file.path === 'scripts/go.sh')!.mode = 0o755;
  return bundle;
}

async function publish(name: string, body: string): Promise<BundleFile[]> {
  const bundle = bundleOf(name, body);
  await publishTarball(`${ctx.url}/namespaces/${base}`, bundle, `?name=${name}`);
  return bundle;
}

/** What an installer should end up with: the installable files, as the registry serves them. */
function served(name: string, bundle: BundleFile[]): Record<string, string> {
  const { files: installable } = installableFiles(bundle, name, DESCRIPTION);
  return Object.fromEntries(installable.map((file) => [file.path, Buffer.from(file.bytes).toString('hex')]));
}

/** Every file below `root` but git's own, as path -> hex bytes. */
async function folder(root: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(root, full).split(path.sep).join('/');
    if (!entry.isFile() || relative.split('/')[0] === '.git') continue;
    result[relative] = (await readFile(full)).toString('hex');
  }
  return result;
}

/** Runs a host's command in its own HOME; throws with its output when it fails. */
async function host(home: string, command: string, args: string[], env: Record<string, string> = {}) {
  await mkdir(home, { recursive: true });
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd: home,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        PATH: `${HOSTS_BIN}${path.delimiter}${process.env.PATH}`,
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_STATE_HOME: path.join(home, '.state'),
        CODEX_HOME: path.join(home, '.codex'),
        DISABLE_TELEMETRY: '1',
        DO_NOT_TRACK: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        NO_UPDATE_NOTIFIER: '1',
        NO_COLOR: '1',
        ...env,
      },
    });
    return `${stdout}\n${stderr}`;
  } catch (error) {
    const failure = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')}: ${failure.message}\n${failure.stdout ?? ''}\n${failure.stderr ?? ''}`,
    );
  }
}

const claude = (home: string, ...args: string[]) => host(home, path.join(HOSTS_BIN!, 'claude'), args);
const codex = async (home: string, ...args: string[]) => {
  await mkdir(path.join(home, '.codex'), { recursive: true });
  return host(home, path.join(HOSTS_BIN!, 'codex'), args);
};
const copilot = (home: string, ...args: string[]) => host(home, path.join(HOSTS_BIN!, 'copilot'), args);

describe.skipIf(!enabled)('agent hosts install from a view and update with their own commands', () => {
  beforeAll(async () => {
    ctx = await liveApp('skillreg-hosts-');
    base = uniqueName('hosts');
    view = uniqueName('team-view');
    await publish(uniqueName('placeholder'), 'Makes the namespace.');
    expect((await putView(ctx.app, view, [base])).statusCode).toBeLessThan(300);
  }, 60_000);
  afterAll(() => ctx?.close());

  const scope = () => `${ctx.url}/views/${view}`;
  const marketplace = () => `skill-registry-view-${view}`;
  const homeOf = (label: string) => path.join(ctx.work, label);

  it('Claude Code: marketplace.json, then plugin install; marketplace update + plugin update bring 1.0.1', async () => {
    const name = uniqueName('claude-http');
    const first = await publish(name, 'Version one.');
    const home = homeOf('claude-http');
    await claude(home, 'plugin', 'marketplace', 'add', `${scope()}/marketplace.json`);
    await claude(home, 'plugin', 'install', `${name}@${marketplace()}`);
    const cache = path.join(home, '.claude/plugins/cache', marketplace(), name);
    expect(await folder(path.join(cache, '1.0.0'))).toEqual(served(name, first));
    expect(((await stat(path.join(cache, '1.0.0/scripts/go.sh'))).mode & 0o111) !== 0).toBe(true);
    const second = await publish(name, 'Version two.');
    await claude(home, 'plugin', 'marketplace', 'update', marketplace());
    await claude(home, 'plugin', 'update', `${name}@${marketplace()}`);
    expect(await folder(path.join(cache, '1.0.1'))).toEqual(served(name, second));
  }, 180_000);

  it('Claude Code, Codex and Copilot CLI install from plugins.git and update', async () => {
    const name = uniqueName('plugins-git');
    const first = await publish(name, 'Version one.');
    const url = `${scope()}/git/plugins.git`;
    const skillIn = (root: string) => path.join(root, 'skills', name);

    const claudeHome = homeOf('claude-git');
    await claude(claudeHome, 'plugin', 'marketplace', 'add', url);
    await claude(claudeHome, 'plugin', 'install', `${name}@${marketplace()}`);
    const claudeCache = path.join(claudeHome, '.claude/plugins/cache', marketplace(), name);
    expect(await folder(skillIn(path.join(claudeCache, '1.0.0')))).toEqual(served(name, first));

    const codexHome = homeOf('codex');
    await codex(codexHome, 'plugin', 'marketplace', 'add', url);
    await codex(codexHome, 'plugin', 'add', `${name}@${marketplace()}`);
    const codexCache = path.join(codexHome, '.codex/plugins/cache', marketplace(), name);
    expect(await folder(skillIn(path.join(codexCache, '1.0.0')))).toEqual(served(name, first));

    const copilotHome = homeOf('copilot');
    await copilot(copilotHome, 'plugin', 'marketplace', 'add', url);
    await copilot(copilotHome, 'plugin', 'install', `${name}@${marketplace()}`);
    const copilotPlugin = path.join(copilotHome, '.copilot/installed-plugins', marketplace(), name);
    expect(await folder(skillIn(copilotPlugin))).toEqual(served(name, first));

    const second = await publish(name, 'Version two.');
    await claude(claudeHome, 'plugin', 'marketplace', 'update', marketplace());
    await claude(claudeHome, 'plugin', 'update', `${name}@${marketplace()}`);
    expect(await folder(skillIn(path.join(claudeCache, '1.0.1')))).toEqual(served(name, second));
    await codex(codexHome, 'plugin', 'marketplace', 'upgrade', marketplace());
    expect(await folder(skillIn(path.join(codexCache, '1.0.1')))).toEqual(served(name, second));
    await copilot(copilotHome, 'plugin', 'marketplace', 'update', marketplace());
    await copilot(copilotHome, 'plugin', 'update', `${name}@${marketplace()}`);
    expect(await folder(skillIn(copilotPlugin))).toEqual(served(name, second));
  }, 300_000);

  it("Gemini CLI and the skills CLI install the skill's own repository; skills update brings the next version", async () => {
    const name = uniqueName('own-repo');
    const first = await publish(name, 'Version one.');
    const repository = `${scope()}/git/skills/${name}.git`;
    const geminiHome = homeOf('gemini');
    await host(geminiHome, NODE22!, [GEMINI!, 'skills', 'install', repository, '--consent']);
    expect(await folder(path.join(geminiHome, '.gemini/skills', name))).toEqual(served(name, first));

    const project = path.join(homeOf('skills'), 'project');
    await mkdir(project, { recursive: true });
    const skills = (...args: string[]) =>
      run(NODE22!, [SKILLS_CLI!, ...args], {
        cwd: project,
        timeout: 120_000,
        env: { PATH: process.env.PATH, HOME: homeOf('skills'), DISABLE_TELEMETRY: '1', DO_NOT_TRACK: '1' },
      });
    await skills('add', repository, '-a', 'claude-code', '-y', '--copy');
    expect(await folder(path.join(project, '.claude/skills', name))).toEqual(served(name, first));
    const detail = async () =>
      ((await (await fetch(`${scope()}/skills/${name}`)).json()) as { computedHash: string }).computedHash;
    const lock = async () =>
      JSON.parse(await readFile(path.join(project, 'skills-lock.json'), 'utf8')).skills[name].computedHash;
    expect(await lock()).toBe(await detail());
    await publish(name, 'Version two.');
    await skills('update', '-y');
    expect(await lock()).toBe(await detail());
  }, 300_000);
});
