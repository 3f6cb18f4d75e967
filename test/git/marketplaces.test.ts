import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleFile } from '../../src/bundle/types.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { putView } from '../helpers/context.js';
import { type LiveApp, liveApp, publishTarball } from '../helpers/live-app.js';

// The plugin marketplaces: {scope}/marketplace.json (Claude Code over HTTP) and {scope}/git/plugins.git
// (Claude Code, Codex and Copilot CLI manifests, the plugins' files inside), read with git itself. The
// hosts' own CLIs install from them too (the hosts suite, when they are installed).

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (
    await run('git', args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
    })
  ).stdout.trim();

let ctx: LiveApp;
beforeAll(async () => {
  ctx = await liveApp('skillreg-marketplaces-');
});
afterAll(() => ctx?.close());

async function publish(bundle: BundleFile[], namespace: string): Promise<void> {
  await publishTarball(`${ctx.url}/namespaces/${namespace}`, bundle);
}

function skill(name: string, body = 'Use it.\n'): BundleFile[] {
  const bundle = files({
    'SKILL.md': skillMd({ name, description: `The ${name} skill.`, body }),
    'scripts/go.sh': '#!/bin/sh\necho go\n',
  });
  bundle[1]!.mode = 0o755;
  return bundle;
}

interface Marketplace {
  name: string;
  owner: { name: string };
  plugins: {
    name: string;
    version: string;
    description: string;
    source: { source: string; url: string; ref: string; sha: string };
    strict: boolean;
    skills: string[];
  }[];
}

describe('{scope}/marketplace.json', () => {
  it('lists every current skill as a git source pinned by tag and commit; 304 while nothing changed', async () => {
    const namespace = uniqueName('mkt');
    const [alpha, beta] = [uniqueName('alpha'), uniqueName('beta')];
    await publish(skill(alpha), namespace);
    await publish(skill(beta), namespace);
    await publish(skill(beta, 'Newer.\n'), namespace);
    const url = `${ctx.url}/namespaces/${namespace}/marketplace.json`;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const marketplace = (await res.json()) as Marketplace;
    expect(marketplace.name).toBe(`skill-registry-ns-${namespace}`);
    expect(marketplace.owner.name).toBe('skill-registry');
    expect(marketplace.plugins.map((plugin) => [plugin.name, plugin.version])).toEqual([
      [alpha, '1.0.0'],
      [beta, '1.0.1'],
    ]);
    for (const plugin of marketplace.plugins) {
      expect(plugin.source.url).toBe(`${ctx.url}/namespaces/${namespace}/git/skills/${plugin.name}.git`);
      expect(plugin.source.ref).toBe(`v${plugin.version}`);
      expect(plugin.strict).toBe(false);
      expect(plugin.skills).toEqual(['./']);
      // The pinned commit is the one the skill's repository has at that tag.
      const refs = await git(ctx.work, 'ls-remote', plugin.source.url, plugin.source.ref);
      expect(refs).toBe(`${plugin.source.sha}\trefs/tags/${plugin.source.ref}`);
    }
    const again = await fetch(url, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
    await publish(skill(alpha, 'Changed.\n'), namespace);
    const changed = await fetch(url, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(changed.status).toBe(200);
  });
});

describe('{scope}/git/plugins.git', () => {
  it("holds the three hosts' manifests and each plugin's skill, byte for byte; a view is the view resolved", async () => {
    const [team, base] = [uniqueName('team'), uniqueName('base')];
    const shared = uniqueName('shared');
    const own = uniqueName('own');
    await publish(skill(shared, 'From base.\n'), base);
    await publish(skill(shared, 'From team: wins.\n'), team);
    await publish(skill(own), team);
    const view = uniqueName('curated');
    expect((await putView(ctx.app, view, [base, team])).statusCode).toBeLessThan(300);

    const url = `${ctx.url}/views/${view}/git/plugins.git`;
    const clone = path.join(ctx.work, view);
    await git(ctx.work, 'clone', '--quiet', '--depth', '1', url, clone);
    const read = async (file: string) => JSON.parse(await readFile(path.join(clone, file), 'utf8'));
    const claude = await read('.claude-plugin/marketplace.json');
    const codex = await read('.agents/plugins/marketplace.json');
    const copilot = await read('.github/plugin/marketplace.json');
    const name = `skill-registry-view-${view}`;
    expect([claude.name, codex.name, copilot.name]).toEqual([name, name, name]);
    const names = [own, shared].sort();
    expect(claude.plugins.map((plugin: { name: string }) => plugin.name)).toEqual(names);
    expect(copilot.owner).toEqual({ name: 'skill-registry' });
    expect(codex.plugins[0].source).toEqual({ source: 'local', path: `./plugins/${names[0]}` });
    for (const plugin of names) {
      const folder = path.join(clone, 'plugins', plugin);
      expect(
        JSON.parse(await readFile(path.join(folder, '.claude-plugin/plugin.json'), 'utf8')),
      ).toMatchObject({
        name: plugin,
        version: '1.0.0',
      });
      const skillFolder = path.join(folder, 'skills', plugin);
      expect(((await stat(path.join(skillFolder, 'scripts/go.sh'))).mode & 0o111) !== 0).toBe(true);
    }
    // The view's winner: the team's version of the shared skill.
    expect(
      await readFile(path.join(clone, 'plugins', shared, 'skills', shared, 'SKILL.md'), 'utf8'),
    ).toContain('From team: wins.');
    // The same content gives the same commit: another clone, the same HEAD.
    expect((await git(ctx.work, 'ls-remote', url, 'HEAD')).split('\t')[0]).toBe(
      await git(clone, 'rev-parse', 'HEAD'),
    );
    // A publish in a layer shows on the next fetch.
    await publish(skill(own, 'Second version.\n'), team);
    await git(clone, 'fetch', '--quiet', '--depth', '1', 'origin', 'main');
    expect(await git(clone, 'show', `FETCH_HEAD:plugins/${own}/skills/${own}/SKILL.md`)).toContain(
      'Second version.',
    );
    const push = await fetch(`${url}/info/refs?service=git-receive-pack`);
    expect(push.status).toBe(403);
  });
});
