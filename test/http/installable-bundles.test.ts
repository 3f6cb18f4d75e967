import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { readArchive } from '../../src/bundle/archive-read.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { skillVersions, versionArchives } from '../../src/db/schema.js';
import { DEFAULT_SCOPE } from '../../src/domain/scope.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { cliInProcess } from '../helpers/cli-output.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { sha256Hex } from '../helpers/hashing.js';
import { listening } from '../helpers/http.js';

// A skill published with fallbacks (no frontmatter, or no name or description in it) is handed to
// installers with its frontmatter completed: the bundle route's default contents and the discovery
// index's archives. The stored version, its digest and the as-published bundle stay as published.

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const BARE = '# Table formatter\n\nFormats tables in Markdown reports neatly.\r\n\nKeep columns aligned.\n';
const GUIDE = '# Guide\n\nUnchanged, byte for byte.\r\n';

async function publishBare(name: string): Promise<{ digest: string; description: string }> {
  const res = await publish(ctx.app, files({ 'SKILL.md': BARE, 'references/guide.md': GUIDE }), {
    query: `name=${name}`,
  });
  expect(res.statusCode, res.body).toBe(201);
  const detail = (await ctx.app.inject({ url: `/skills/${name}` })).json();
  return { digest: detail.digest, description: detail.description };
}

async function bundle(url: string) {
  const res = await ctx.app.inject({ url });
  expect(res.statusCode, res.body).toBe(200);
  const format = url.includes('format=zip') ? 'zip' : 'tar.gz';
  let unpacked = await readArchive(res.rawPayload, format, DEFAULT_LIMITS);
  if (format === 'tar.gz') {
    // A tar.gz holds the files in one folder named after the skill; a zip at its root.
    const folder = `${decodeURIComponent(/\/skills\/([^/]+)\/bundle/.exec(url)![1]!)}/`;
    expect(unpacked.every((file) => file.path.startsWith(folder))).toBe(true);
    unpacked = unpacked.map((file) => ({ ...file, path: file.path.slice(folder.length) }));
  }
  const byPath = new Map(unpacked.map((file) => [file.path, Buffer.from(file.bytes).toString('utf8')]));
  return { res, files: unpacked, byPath };
}

function frontmatterOf(text: string): unknown {
  expect(text.startsWith('---\n')).toBe(true);
  return parse(text.slice(4, text.indexOf('\n---\n', 4)));
}

describe('bundles of a skill published without frontmatter', () => {
  it('serve SKILL.md with the registry name and description by default, every other byte as published', async () => {
    const name = uniqueName('bare-bundle');
    const { digest, description } = await publishBare(name);
    expect(description).toBe('Formats tables in Markdown reports neatly.');

    for (const format of ['zip', 'tar.gz'] as const) {
      const { res, byPath } = await bundle(`/skills/${name}/bundle?format=${format}`);
      const served = byPath.get('SKILL.md')!;
      expect(frontmatterOf(served), format).toEqual({ name, description });
      expect(served.endsWith(BARE), format).toBe(true);
      expect(byPath.get('references/guide.md')).toBe(GUIDE);
      expect(res.headers['x-skill-contents']).toBe('installable');
      // The version's digest names the version, whatever is served.
      expect(res.headers['x-skill-digest']).toBe(digest);
      expect(res.headers['repr-digest']).toBe(
        `sha-256=:${Buffer.from(sha256Hex(res.rawPayload), 'hex').toString('base64')}:`,
      );
    }
  });

  it('serve the files exactly as published with contents=as-published, which is what the digest covers', async () => {
    const name = uniqueName('bare-published');
    const { digest } = await publishBare(name);
    for (const format of ['zip', 'tar.gz'] as const) {
      const {
        res,
        files: unpacked,
        byPath,
      } = await bundle(`/skills/${name}/bundle?format=${format}&contents=as-published`);
      expect(byPath.get('SKILL.md')).toBe(BARE);
      expect(bundleDigest(unpacked)).toBe(digest);
      expect(res.headers['x-skill-contents']).toBe('as-published');
    }
    // Different bytes, different validators.
    const installable = await ctx.app.inject({ url: `/skills/${name}/bundle?format=zip` });
    const published = await ctx.app.inject({
      url: `/skills/${name}/bundle?format=zip&contents=as-published`,
    });
    expect(installable.headers.etag).not.toBe(published.headers.etag);
    expect(sha256Hex(installable.rawPayload)).not.toBe(sha256Hex(published.rawPayload));
    // /content and the stored files stay as published.
    expect((await ctx.app.inject({ url: `/skills/${name}/files/SKILL.md` })).body).toBe(BARE);
    const bad = await ctx.app.inject({ url: `/skills/${name}/bundle?contents=completed` });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.body).toContain('contents');
  });

  it('are what the discovery index lists: its digest is the sha256 of the completed archive it links', async () => {
    const name = uniqueName('bare-index');
    const { description } = await publishBare(name);
    const whole = (await ctx.app.inject({ url: '/.well-known/agent-skills/index.json' })).json();
    const one = (await ctx.app.inject({ url: `/skills/${name}/.well-known/agent-skills/index.json` })).json();
    const entry = whole.skills.find((item: { name: string }) => item.name === name);
    expect(one.skills).toEqual([entry]);
    const url = new URL(entry.url);
    const { res, byPath } = await bundle(url.pathname + url.search);
    expect(entry.digest).toBe(`sha256:${sha256Hex(res.rawPayload)}`);
    expect(frontmatterOf(byPath.get('SKILL.md')!)).toEqual({ name, description });
  });

  it('complete only what is missing: a frontmatter without description keeps its other keys', async () => {
    const name = uniqueName('half');
    const stored = `---\nname: ${name}\nlicense: MIT\nmetadata:\n  owner: data\n---\n# Half\n\nCleans CSV exports before loading them.\n`;
    const res = await publish(ctx.app, files({ 'SKILL.md': stored }));
    expect(res.statusCode, res.body).toBe(201);
    const { byPath } = await bundle(`/skills/${name}/bundle?format=zip`);
    const served = byPath.get('SKILL.md')!;
    expect(frontmatterOf(served)).toEqual({
      name,
      description: 'Cleans CSV exports before loading them.',
      license: 'MIT',
      metadata: { owner: 'data' },
    });
    expect(served.endsWith('---\n# Half\n\nCleans CSV exports before loading them.\n')).toBe(true);
  });
});

describe('bundles of a skill whose frontmatter is complete', () => {
  it('are one archive whatever the contents asked, stored once', async () => {
    const name = uniqueName('complete');
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'Complete already.' }), 'a.txt': 'a\n' }),
    );
    expect(res.statusCode, res.body).toBe(201);
    for (const format of ['zip', 'tar.gz']) {
      const installable = await ctx.app.inject({ url: `/skills/${name}/bundle?format=${format}` });
      const published = await ctx.app.inject({
        url: `/skills/${name}/bundle?format=${format}&contents=as-published`,
      });
      expect(sha256Hex(installable.rawPayload), format).toBe(sha256Hex(published.rawPayload));
    }
    const rows = await ctx.database.db
      .select({ key: versionArchives.format, sha256: versionArchives.blobDigest })
      .from(versionArchives)
      .innerJoin(skillVersions, eq(skillVersions.id, versionArchives.versionId))
      .where(eq(skillVersions.name, name));
    const byKey = Object.fromEntries(rows.map((row) => [row.key, row.sha256]));
    expect(Object.keys(byKey).sort()).toEqual([
      'installable.tar.gz+folder',
      'installable.zip',
      'tar.gz+folder',
      'zip',
    ]);
    expect(byKey['installable.zip']).toBe(byKey.zip);
    expect(byKey['installable.tar.gz+folder']).toBe(byKey['tar.gz+folder']);
  });
});

describe('versions stored before installable archives existed', () => {
  it('get them built (completed) or linked (nothing to complete, reading only SKILL.md), the same bytes a publish stores', async () => {
    const bare = uniqueName('old-bare');
    await publishBare(bare);
    const complete = uniqueName('old-complete');
    expect(
      (await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: complete, description: 'Old.' }) })))
        .statusCode,
    ).toBe(201);
    const { db } = ctx.database;
    const versions = await db
      .select({ versionId: skillVersions.id, name: skillVersions.name })
      .from(skillVersions)
      .where(inArray(skillVersions.name, [bare, complete]));
    const ids = versions.map((row) => row.versionId);
    const installableOf = async () =>
      new Map(
        (
          await db
            .select({ versionId: versionArchives.versionId, sha256: versionArchives.blobDigest })
            .from(versionArchives)
            .where(
              and(inArray(versionArchives.versionId, ids), eq(versionArchives.format, 'installable.zip')),
            )
        ).map((row) => [row.versionId, row.sha256]),
      );
    const atPublish = await installableOf();
    expect(atPublish.size).toBe(2);
    // As an upgraded registry has them: archives as published only.
    await db
      .delete(versionArchives)
      .where(and(inArray(versionArchives.versionId, ids), eq(versionArchives.format, 'installable.zip')));

    const archives = ctx.app.registry.archives;
    const filesOf = vi.spyOn(ctx.app.registry.repositories.archives, 'filesOf');
    try {
      const missing = (await ctx.app.registry.discovery.currentArchives(DEFAULT_SCOPE)).filter((entry) =>
        ids.includes(entry.versionId),
      );
      expect(missing.every((entry) => entry.archiveSha256 === null)).toBe(true);
      const digests = await archives.buildMissing(missing, 'zip', 'installable');
      const bareId = versions.find((row) => row.name === bare)!.versionId;
      // Only the skill that needs completing had its files loaded and an archive built.
      expect(filesOf.mock.calls.map(([loaded]) => [...loaded])).toEqual([[bareId]]);
      expect(digests).toEqual(atPublish);
      expect(await installableOf()).toEqual(atPublish);
    } finally {
      filesOf.mockRestore();
    }
  });
});

describe('skillreg pull and verify of a skill published without frontmatter', () => {
  it('pull writes SKILL.md completed (verified against the published digest first), --as-published byte for byte; verify passes', async () => {
    const name = uniqueName('bare-pull');
    const { description } = await publishBare(name);
    const url = await listening(ctx.app);
    const work = await mkdtemp(path.join(tmpdir(), 'skillreg-installable-'));
    try {
      const global = ['--url', url, '--token', ADMIN_TOKEN];
      const pulled = await cliInProcess(['pull', name, path.join(work, 'installed'), ...global]);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stdout).toContain('written with the ones the registry uses');
      const installed = await readFile(path.join(work, 'installed', 'SKILL.md'), 'utf8');
      expect(frontmatterOf(installed)).toEqual({ name, description });
      expect(installed.endsWith(BARE)).toBe(true);
      // The same bytes the registry hands installers.
      const { byPath } = await bundle(`/skills/${name}/bundle?format=zip`);
      expect(installed).toBe(byPath.get('SKILL.md'));

      const raw = await cliInProcess(['pull', name, path.join(work, 'raw'), '--as-published', ...global]);
      expect(raw.code, raw.stderr).toBe(0);
      expect(raw.stdout).not.toContain('written with the ones the registry uses');
      expect(await readFile(path.join(work, 'raw', 'SKILL.md'), 'utf8')).toBe(BARE);
      expect(await readFile(path.join(work, 'raw', 'references', 'guide.md'), 'utf8')).toBe(GUIDE);

      const verified = await cliInProcess(['verify', name, ...global]);
      expect(verified.code, verified.stderr).toBe(0);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
