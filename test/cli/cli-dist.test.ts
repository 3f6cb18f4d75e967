import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildCliBundle } from '../../src/cli-dist/bundle.js';
import { packCliTarball } from '../../src/cli-dist/npm-package.js';
import { skillMd, uniqueName } from '../helpers/bundles.js';
import { type CliRun, outputOf, PACKAGE_VERSION, showRun } from '../helpers/cli-output.js';
import { ADMIN_TOKEN, createTestApp } from '../helpers/context.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';
import { REPO_ROOT } from '../helpers/server-process.js';

/**
 * The registry serves its own CLI (GET /cli, /cli/skillreg.mjs, /cli/skillreg.tgz): fetched from a live
 * server, then run as real processes, outside this repository (no node_modules to lean on), and
 * installed with npm from the tarball's URL alone.
 */

let ctx: LiveApp;
let issuer: TestIssuer;
let bundleFile: string;
let fetched: Record<'mjs' | 'tgz', { bytes: Buffer; headers: Headers }>;

/** This process's environment without registry settings, npm pointed at nothing (no registry is needed). */
function env(extra: Record<string, string> = {}): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      key.startsWith('SKILLREG_') ||
      key.startsWith('npm_') ||
      key === 'NODE_OPTIONS'
    )
      continue;
    clean[key] = value;
  }
  return {
    ...clean,
    CI: 'true',
    NO_COLOR: '1',
    // Any attempt to reach a package registry fails at once (nothing listens on port 9).
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_cache: path.join(ctx.work, 'npm-cache'),
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...extra,
  };
}

function run(
  command: string,
  args: string[],
  extra: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<CliRun> {
  return outputOf(spawn(command, args, { cwd: ctx.work, env: env(extra) }), timeoutMs);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function get(pathname: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${ctx.url}${pathname}`, { headers });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function writeSkill(folder: string, content: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'SKILL.md'), content);
}

/** Entries of a .tgz: path -> { bytes, mode, mtime }. */
async function untar(tgz: Buffer): Promise<Map<string, { bytes: Buffer; mode: number; mtime: number }>> {
  const entries = new Map<string, { bytes: Buffer; mode: number; mtime: number }>();
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      entries.set(entry.header.name, {
        bytes: Buffer.concat(chunks),
        mode: entry.header.mode ?? 0,
        mtime: entry.header.mtime?.getTime() ?? -1,
      });
    }
  })();
  extract.end(gunzipSync(tgz));
  await done;
  return entries;
}

beforeAll(async () => {
  // The workflow publishes by trusted publishing: the registry trusts an issuer run by this test.
  issuer = await startTestIssuer();
  // Work outside the repository: the bundle must not find this project's node_modules by walking up.
  ctx = await liveApp('skillreg-cli-dist-', { SKILLREG_OIDC_ISSUERS: issuer.url });
  const mjs = await get('/cli/skillreg.mjs');
  const tgz = await get('/cli/skillreg.tgz');
  expect(mjs.response.status).toBe(200);
  expect(tgz.response.status).toBe(200);
  fetched = {
    mjs: { bytes: mjs.bytes, headers: mjs.response.headers },
    tgz: { bytes: tgz.bytes, headers: tgz.response.headers },
  };
  bundleFile = path.join(ctx.work, 'skillreg.mjs');
  await writeFile(bundleFile, fetched.mjs.bytes);
}, 120_000);

afterAll(async () => {
  await ctx?.close();
  await issuer?.close();
});

describe('GET /cli', () => {
  it('lists the version, absolute URLs and the sha256 of the very bytes served', async () => {
    const { response, bytes } = await get('/cli');
    expect(response.status).toBe(200);
    const index = JSON.parse(bytes.toString()) as {
      version: string;
      package: string;
      files: Record<string, { url: string; sha256: string; size: number }>;
      install: Record<string, string>;
    };
    expect(index.version).toBe(PACKAGE_VERSION);
    for (const [name, file] of [
      ['skillreg.mjs', fetched.mjs],
      ['skillreg.tgz', fetched.tgz],
    ] as const) {
      expect(index.files[name]).toEqual({
        url: `${ctx.url}/cli/${name}`,
        sha256: sha256(file.bytes),
        size: file.bytes.byteLength,
      });
    }
    expect(index.install.npm).toBe(`npm install --global ${ctx.url}/cli/skillreg.tgz`);
    // Revalidated (a server upgrade changes it), with a strong tag that answers 304.
    expect(response.headers.get('cache-control')).toBe('public, no-cache');
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"sha256-[0-9a-f]{64}"$/);
    expect((await get('/cli', { 'if-none-match': etag })).response.status).toBe(304);
  });

  it('serves each file with its checksum, a strong ETag from it and a 304 when unchanged', async () => {
    for (const [name, file, type] of [
      ['skillreg.mjs', fetched.mjs, 'text/javascript; charset=utf-8'],
      ['skillreg.tgz', fetched.tgz, 'application/gzip'],
    ] as const) {
      const hex = sha256(file.bytes);
      expect(file.headers.get('content-type')).toBe(type);
      expect(file.headers.get('x-checksum-sha256')).toBe(hex);
      expect(file.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`);
      expect(file.headers.get('etag')).toBe(`"sha256-${hex}"`);
      expect(file.headers.get('cache-control')).toBe('public, no-cache');
      const again = await get(`/cli/${name}`, { 'if-none-match': `"sha256-${hex}"` });
      expect(again.response.status).toBe(304);
      expect(again.bytes.byteLength).toBe(0);
    }
  });

  it('is public even when reads need a token: it is the registry code, and CI fetches it first', async () => {
    const guarded = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
    try {
      const index = await guarded.app.inject({ method: 'GET', url: '/cli' });
      expect(index.statusCode, index.body).toBe(200);
      const file = await guarded.app.inject({ method: 'HEAD', url: '/cli/skillreg.tgz' });
      expect(file.statusCode).toBe(200);
      // Skills stay behind the token.
      expect((await guarded.app.inject({ method: 'GET', url: '/skills' })).statusCode).toBe(401);
    } finally {
      await guarded.close();
    }
  }, 120_000);
});

describe('skillreg.mjs', () => {
  it('imports nothing but Node built-ins and holds none of the server', () => {
    const source = fetched.mjs.bytes.toString('utf8');
    // CommonJS dependencies call esbuild's require shim (a minified name): find it to read its calls.
    const shim = /([\w$]+)=\(?[\w$]+\)?=>typeof require<"u"\?require/.exec(source)?.[1];
    if (source.includes('typeof require<"u"')) expect(shim).toBeDefined();
    const loads = [
      /(?:^|[;\n}])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s*[\w$]+)?\s*from\s*["']([^"']+)["']/g,
      /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
      /\brequire\(\s*["']([^"']+)["']\s*\)/g,
      ...(shim
        ? [new RegExp(`[^\\w$.]${shim.replace(/\$/g, '\\$')}\\(\\s*["']([^"']+)["']\\s*\\)`, 'g')]
        : []),
    ];
    const specifiers = new Set(
      loads.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!)),
    );
    expect(specifiers.size).toBeGreaterThan(5);
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    expect([...specifiers].filter((specifier) => !builtins.has(specifier))).toEqual([]);
    for (const server of ['fastify', 'pglite', 'drizzle', 'pg-pool', 'preact']) {
      expect(source, server).not.toContain(server);
    }
  });

  it('carries the licenses of the packages bundled in it', () => {
    const source = fetched.mjs.bytes.toString('utf8');
    const notices = source.slice(source.lastIndexOf('/*!'));
    expect(notices).toContain('Third-party software bundled in this file');
    for (const bundled of ['commander@', 'yaml@', '@secretlint/core@', 'tar-stream@']) {
      expect(notices).toContain(bundled);
    }
    expect(notices).toContain('Permission is hereby granted, free of charge');
    expect(notices.trimEnd().endsWith('*/')).toBe(true);
  });

  it('runs with node alone: --help, -V (the server version), and serve/migrate say what they need', async () => {
    const help = await run(process.execPath, [bundleFile, '--help']);
    expect(help.code, showRun(help)).toBe(0);
    for (const command of ['validate', 'publish', 'sync', 'pull', 'verify', 'token']) {
      expect(help.stdout).toContain(command);
    }
    const version = await run(process.execPath, [bundleFile, '-V']);
    expect(version.stdout.trim(), showRun(version)).toBe(PACKAGE_VERSION);
    for (const command of ['serve', 'migrate']) {
      const refused = await run(process.execPath, [bundleFile, command]);
      expect(refused.code, showRun(refused)).toBe(1);
      expect(refused.stderr).toBe(
        `skillreg ${command} needs the full package: clone the repository or use the container image\n`,
      );
    }
  });

  it('validates a folder offline and publishes it to the live registry', async () => {
    const name = uniqueName('dist');
    const folder = path.join(ctx.work, 'skills', name);
    await writeSkill(folder, skillMd({ name, description: 'Published by the CLI the registry serves.' }));
    const bad = path.join(ctx.work, 'bad-skills', 'bad');
    await writeSkill(bad, skillMd({ name: 'Bad Name', description: 'An invalid name.' }));

    const valid = await run(process.execPath, [bundleFile, 'validate', folder]);
    expect(valid.code, showRun(valid)).toBe(0);
    expect(valid.stdout).toContain(name);
    const invalid = await run(process.execPath, [bundleFile, 'validate', bad]);
    expect(invalid.code, showRun(invalid)).toBe(1);
    expect(invalid.stdout + invalid.stderr).toContain('Bad Name');

    const published = await run(process.execPath, [bundleFile, 'publish', folder], {
      SKILLREG_URL: ctx.url,
      SKILLREG_TOKEN: ADMIN_TOKEN,
    });
    expect(published.code, showRun(published)).toBe(0);
    expect(published.stdout).toContain('created');
    expect(published.stdout).toContain(`${name}@`);
    expect((await get(`/skills/${name}`)).response.status).toBe(200);
  });
});

describe('skillreg.tgz', () => {
  it('is an npm package of the same bundle: package.json with bin and no dependencies, fixed mtimes', async () => {
    const entries = await untar(fetched.tgz.bytes);
    expect([...entries.keys()].sort()).toEqual(['package/package.json', 'package/skillreg.mjs']);
    expect(entries.get('package/skillreg.mjs')!.bytes.equals(fetched.mjs.bytes)).toBe(true);
    expect(entries.get('package/skillreg.mjs')!.mode & 0o111).not.toBe(0);
    for (const entry of entries.values()) expect(entry.mtime).toBe(0);
    const manifest = JSON.parse(entries.get('package/package.json')!.bytes.toString()) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      version: PACKAGE_VERSION,
      bin: { skillreg: 'skillreg.mjs' },
      type: 'module',
    });
    expect(manifest.dependencies).toBeUndefined();
    // A name nobody can publish on npmjs.com (capitals), so `npm update -g` can never swap it for a stranger's.
    expect(manifest.name).toMatch(/[A-Z]/);
  });

  it('is byte-for-byte the same when built again', async () => {
    const bundle = await buildCliBundle();
    expect(bundle.source.equals(fetched.mjs.bytes)).toBe(true);
    expect((await packCliTarball(bundle.version, bundle.source)).equals(fetched.tgz.bytes)).toBe(true);
  });

  it('installs with npm from its URL alone (no package registry reachable) and runs its bin', async () => {
    const prefix = path.join(ctx.work, 'installed');
    const install = await run(
      'npm',
      ['install', '--prefix', prefix, `${ctx.url}/cli/skillreg.tgz`],
      {},
      120_000,
    );
    expect(install.code, showRun(install)).toBe(0);
    const version = await run(path.join(prefix, 'node_modules', '.bin', 'skillreg'), ['-V']);
    expect(version.code, showRun(version)).toBe(0);
    expect(version.stdout.trim()).toBe(PACKAGE_VERSION);
  }, 180_000);

  it('runs through npx --package <url> without a package registry', async () => {
    const folder = path.join(ctx.work, 'npx-skills', 'npx-skill');
    await writeSkill(folder, skillMd({ name: 'npx-skill', description: 'Validated through npx.' }));
    const result = await run(
      'npx',
      ['--yes', '--package', `${ctx.url}/cli/skillreg.tgz`, 'skillreg', 'validate', folder],
      {},
      120_000,
    );
    expect(result.code, showRun(result)).toBe(0);
    expect(result.stdout).toContain('npx-skill');
  }, 180_000);
});

/** A step of docs/github-actions-sync.yml, run as GitHub runs `shell: bash`. */
interface WorkflowStep {
  name?: string;
  run?: string;
}

function workflowStep(name: string): string {
  const workflow = parseYaml(
    readFileSync(path.join(REPO_ROOT, 'docs', 'github-actions-sync.yml'), 'utf8'),
  ) as {
    jobs: Record<string, { steps: WorkflowStep[] }>;
  };
  const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
  const step = steps.find((candidate) => candidate.name === name);
  if (!step?.run) throw new Error(`docs/github-actions-sync.yml has no step '${name}' with a run script`);
  return step.run;
}

async function bash(script: string, cwd: string, extra: Record<string, string>): Promise<CliRun> {
  await mkdir(cwd, { recursive: true });
  return outputOf(
    spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, env: env(extra) }),
  );
}

describe('the CI documents run as written', () => {
  it('the workflow installs the CLI from the registry (checking a pinned sha256), validates and publishes with its OIDC identity', async () => {
    const install = workflowStep('Install the skillreg CLI from the registry');
    const global = path.join(ctx.work, 'workflow-global');
    const runner = {
      SKILLREG_URL: ctx.url,
      npm_config_prefix: global,
      PATH: `${path.join(global, 'bin')}${path.delimiter}${process.env.PATH}`,
    };
    const pinned = sha256(fetched.tgz.bytes);

    const refusedTemp = path.join(ctx.work, 'runner-temp-1');
    await mkdir(refusedTemp, { recursive: true });
    const refused = await bash(install, ctx.work, {
      ...runner,
      RUNNER_TEMP: refusedTemp,
      SKILLREG_CLI_SHA256: '0'.repeat(64),
    });
    expect(refused.code, showRun(refused)).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/FAILED/);

    const installedTemp = path.join(ctx.work, 'runner-temp-2');
    await mkdir(installedTemp, { recursive: true });
    const installed = await bash(install, ctx.work, {
      ...runner,
      RUNNER_TEMP: installedTemp,
      SKILLREG_CLI_SHA256: pinned,
    });
    expect(installed.code, showRun(installed)).toBe(0);
    expect(installed.stdout).toContain(PACKAGE_VERSION);

    const repo = path.join(ctx.work, 'workflow-repo');
    const name = uniqueName('workflow');
    await writeSkill(
      path.join(repo, 'skills', name),
      skillMd({ name, description: 'Synced by the workflow.' }),
    );
    const validated = await bash(workflowStep('Validate every skill (offline)'), repo, runner);
    expect(validated.code, showRun(validated)).toBe(0);
    // The namespace trusts the job's repository once (an admin's step); then no secret is needed.
    const namespace = uniqueName('workflow-ns');
    const bound = await fetch(`${ctx.url}/namespaces/${namespace}/trusted-publishers/github-main`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        issuer: issuer.url,
        claims: { repository: String(issuer.defaults.repository) },
      }),
    });
    expect(bound.status).toBe(201);
    const job = {
      ...runner,
      SKILLREG_NAMESPACE: namespace,
      ACTIONS_ID_TOKEN_REQUEST_URL: issuer.requestUrl,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: issuer.requestToken,
    };
    const published = await bash(workflowStep('Publish'), repo, job);
    expect(published.code, showRun(published)).toBe(0);
    expect((await get(`/namespaces/${namespace}/skills/${name}`)).response.status).toBe(200);
    // Without an ID token (no id-token: write) the step fails, saying why.
    const withoutToken = await bash(workflowStep('Publish'), repo, {
      ...runner,
      SKILLREG_NAMESPACE: namespace,
    });
    expect(withoutToken.code).not.toBe(0);
    expect(withoutToken.stderr).toContain('id-token: write');
  }, 180_000);

  it("docs/CI.md's commands for other CI systems publish with the CLI the registry serves", async () => {
    const text = readFileSync(path.join(REPO_ROOT, 'docs', 'CI.md'), 'utf8');
    const block = /## Other CI systems\s+```sh\n([\s\S]*?)```/.exec(text)?.[1];
    expect(block).toBeDefined();
    // The two exports hold the reader's registry and token: this test's instead.
    const script = block!
      .split('\n')
      .filter((line) => !/^export SKILLREG_(URL|TOKEN)=/.test(line))
      .join('\n');
    const repo = path.join(ctx.work, 'other-ci-repo');
    const name = uniqueName('other-ci');
    await writeSkill(path.join(repo, name), skillMd({ name, description: 'Synced from another CI system.' }));
    const tmp = path.join(ctx.work, 'other-ci-tmp');
    await mkdir(tmp, { recursive: true });
    const result = await bash(script, repo, {
      SKILLREG_URL: ctx.url,
      SKILLREG_TOKEN: ADMIN_TOKEN,
      TMPDIR: tmp,
    });
    expect(result.code, showRun(result)).toBe(0);
    expect((await get(`/skills/${name}`)).response.status).toBe(200);
  }, 120_000);
});
