import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clawhubFingerprint } from '../../src/bundle/clawhub-fingerprint.js';
import { installableFiles } from '../../src/bundle/installable-skill-md.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { type LiveApp, liveApp, publishTarball } from '../helpers/live-app.js';

// The ClawHub-compatible read API ({scope}/api/v1/...): its shapes over HTTP, and the real `clawhub`
// CLI (when SKILLREG_HOSTS_BIN holds it, as in .ci/run) searching, installing, updating and listing.

const run = promisify(execFile);
let ctx: LiveApp;
beforeAll(async () => {
  ctx = await liveApp('skillreg-clawhub-');
});
afterAll(() => ctx?.close());

async function publish(bundle: BundleFile[], namespace: string): Promise<void> {
  await publishTarball(`${ctx.url}/namespaces/${namespace}`, bundle);
}

const bundleOf = (name: string, body: string) =>
  files({
    'SKILL.md': skillMd({ name, description: `Reconciles ${name} ledgers for the claw tests.`, body }),
    'references/guide.md': `# Guide for ${name}\n`,
  });

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe('{scope}/api/v1 over HTTP', () => {
  it('inspects, lists, searches, downloads and resolves in the shapes the clawhub CLI reads', async () => {
    const namespace = uniqueName('claw');
    const name = uniqueName('ledger');
    const first = bundleOf(name, 'First.');
    await publish(first, namespace);
    await publish(bundleOf(name, 'Second.'), namespace);
    const api = `${ctx.url}/namespaces/${namespace}/api/v1`;

    const skill = await get(`${api}/skills/${name}`);
    expect(skill.status).toBe(200);
    expect(skill.json).toMatchObject({
      skill: { slug: name, displayName: name, tags: { latest: '1.0.1' } },
      latestVersion: { version: '1.0.1', changelog: '' },
      owner: { handle: namespace },
      moderation: null,
    });
    const list = await get(`${api}/skills?limit=10&sort=createdAt`);
    expect((list.json.items as { slug: string }[]).map((item) => item.slug)).toEqual([name]);
    const search = await get(`${api}/search?q=${encodeURIComponent('reconcile ledgers')}&limit=5`);
    expect((search.json.results as { slug: string; score: number }[])[0]).toMatchObject({ slug: name });
    const versions = await get(`${api}/skills/${name}/versions`);
    expect((versions.json.items as { version: string }[]).map((item) => item.version)).toEqual([
      '1.0.1',
      '1.0.0',
    ]);
    const version = await get(`${api}/skills/${name}/versions/1.0.0`);
    const listed = (version.json.version as { files: { path: string }[] }).files
      .map((file) => file.path)
      .sort();
    expect(listed).toEqual(['SKILL.md', 'references/guide.md']);
    const download = await fetch(`${api}/download?slug=${name}&version=latest`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toMatch(/application\/zip/);
    const file = await fetch(`${api}/skills/${name}/file?path=references/guide.md&version=1.0.0`);
    expect(await file.text()).toBe(`# Guide for ${name}\n`);

    // The fingerprint of 1.0.0's installed files names 1.0.0; anything else matches nothing.
    const installed = installableFiles(first, name, `Reconciles ${name} ledgers for the claw tests.`).files;
    const resolved = await get(`${api}/resolve?slug=${name}&hash=${clawhubFingerprint(installed)}`);
    expect(resolved.json).toEqual({ match: { version: '1.0.0' }, latestVersion: { version: '1.0.1' } });
    const unknown = await get(`${api}/resolve?slug=${name}&hash=${'0'.repeat(64)}`);
    expect(unknown.json.match).toBeNull();
    const missing = await fetch(`${api}/skills/no-such-claw-skill`);
    expect(missing.status).toBe(404);
    const badHash = await fetch(`${api}/resolve?slug=${name}&hash=xyz`);
    expect(badHash.status).toBe(400);
    expect(badHash.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await badHash.json()) as { detail: string }).detail).toMatch(/hash/);
  });
});

const HOSTS_BIN = process.env.SKILLREG_HOSTS_BIN;
const CLAWHUB = HOSTS_BIN ? path.join(HOSTS_BIN, 'clawhub') : '';

describe.skipIf(!HOSTS_BIN || !existsSync(CLAWHUB))('the clawhub CLI against the registry', () => {
  it("searches, inspects, installs (latest and --version), lists and updates with the registry's files", async () => {
    const namespace = uniqueName('claw-cli');
    const name = uniqueName('claw-skill');
    await publish(bundleOf(name, 'First.'), namespace);
    await publish(bundleOf(name, 'Second.'), namespace);
    const registry = `${ctx.url}/namespaces/${namespace}`;
    const workdir = path.join(ctx.work, namespace);
    await mkdir(workdir, { recursive: true });
    const clawhub = async (...args: string[]) => {
      const { stdout, stderr } = await run(
        CLAWHUB,
        ['--registry', registry, '--workdir', workdir, '--no-input', ...args],
        {
          cwd: workdir,
          timeout: 60_000,
          env: { PATH: process.env.PATH, HOME: workdir, NO_COLOR: '1', DO_NOT_TRACK: '1' },
        },
      );
      return `${stdout}\n${stderr}`;
    };
    expect(await clawhub('search', 'reconcile ledgers')).toContain(name);
    expect(await clawhub('inspect', name)).toContain('1.0.1');
    await clawhub('install', name, '--version', '1.0.0');
    const folder = path.join(workdir, 'skills', name);
    expect(await readFile(path.join(folder, 'SKILL.md'), 'utf8')).toContain('First.');
    expect(await clawhub('list')).toContain(name);
    await clawhub('update', name);
    expect(await readFile(path.join(folder, 'SKILL.md'), 'utf8')).toContain('Second.');
    const served = (await fetch(`${registry}/skills/${name}/files/references/guide.md`)).text();
    expect(await readFile(path.join(folder, 'references/guide.md'), 'utf8')).toBe(await served);
    expect((await readdir(folder)).filter((entry) => !entry.startsWith('.')).sort()).toEqual([
      'SKILL.md',
      'references',
    ]);
  }, 120_000);
});
