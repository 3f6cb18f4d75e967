import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive } from '../../src/bundle/archive-read.js';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { blobs, skillVersions, versionArchives } from '../../src/db/schema.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { sha256Hex } from '../helpers/hashing.js';

// GET /skills/{name}/bundle: a tar.gz extracts into one folder named after the skill; a zip (what
// the discovery index links, and installers read) keeps SKILL.md at its root. Both publish again as
// the same digest.

const execFileAsync = promisify(execFile);

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

async function publishSkill(name: string) {
  const bundle = files({
    'SKILL.md': skillMd({ name, description: 'Lays out bundles for tar users.' }),
    'references/guide.md': '# Guide\n',
    'scripts/run.sh': '#!/bin/sh\necho run\n',
  });
  const res = await publish(ctx.app, bundle);
  expect(res.statusCode, res.body).toBe(201);
  return { bundle, digest: (res.json() as { digest: string }).digest };
}

describe('GET /skills/{name}/bundle layouts', () => {
  it('tar.gz: every entry inside <name>/, so extracting makes one folder', async () => {
    const name = uniqueName('tar-folder');
    const { bundle, digest } = await publishSkill(name);
    for (const contents of ['installable', 'as-published']) {
      const res = await ctx.app.inject(`/skills/${name}/bundle?contents=${contents}`);
      expect(res.statusCode, res.body).toBe(200);
      const entries = await readArchive(res.rawPayload, 'tar.gz', DEFAULT_LIMITS);
      expect(entries.map((file) => file.path).sort(), contents).toEqual(
        bundle.map((file) => `${name}/${file.path}`).sort(),
      );
      const inside = entries.map((file) => ({ ...file, path: file.path.slice(name.length + 1) }));
      expect(bundleDigest(inside), contents).toBe(digest);
    }
  });

  it('tar.gz: `tar -xzf` makes exactly the folder <name> holding the files', async () => {
    if (!existsSync('/usr/bin/tar') && !existsSync('/bin/tar')) {
      console.log('[bundle-layout] skipped the tar(1) check: no tar on this machine');
      return;
    }
    const name = uniqueName('tar-xzf');
    await publishSkill(name);
    const work = await mkdtemp(path.join(tmpdir(), 'skillreg-tar-'));
    try {
      const archive = path.join(work, 'bundle.tar.gz');
      await writeFile(archive, (await ctx.app.inject(`/skills/${name}/bundle`)).rawPayload);
      const into = path.join(work, 'out');
      await mkdir(into);
      await execFileAsync('tar', ['-xzf', archive, '-C', into]);
      expect(await readdir(into)).toEqual([name]);
      expect((await readdir(path.join(into, name))).sort()).toEqual(['SKILL.md', 'references', 'scripts']);
      expect(await readFile(path.join(into, name, 'references', 'guide.md'), 'utf8')).toBe('# Guide\n');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('zip: the files at its root, as the discovery index links it', async () => {
    const name = uniqueName('zip-root');
    const { bundle, digest } = await publishSkill(name);
    const res = await ctx.app.inject(`/skills/${name}/bundle?format=zip`);
    const entries = await readArchive(res.rawPayload, 'zip', DEFAULT_LIMITS);
    expect(entries.map((file) => file.path).sort()).toEqual(bundle.map((file) => file.path).sort());
    expect(bundleDigest(entries)).toBe(digest);
    const index = (await ctx.app.inject(`/skills/${name}/.well-known/agent-skills/index.json`)).json();
    expect(new URL(index.skills[0].url).searchParams.get('format')).toBe('zip');
    expect(index.skills[0].digest).toBe(`sha256:${sha256Hex(res.rawPayload)}`);
  });

  it('an archive stored before tar.gz had its folder is never served: the new layout is built, with its own ETag', async () => {
    const name = uniqueName('tar-upgrade');
    const { bundle } = await publishSkill(name);
    const [version] = await ctx.database.db
      .select({ id: skillVersions.id, digest: skillVersions.digest })
      .from(skillVersions)
      .where(eq(skillVersions.name, name));
    // What an older registry stored: the files at the root, under the key `tar.gz`.
    const flat = await writeTarGz(bundle);
    const flatSha256 = sha256Hex(flat);
    const { db } = ctx.database;
    await db
      .insert(blobs)
      .values({ digest: flatSha256, size: flat.byteLength, content: flat })
      .onConflictDoNothing();
    for (const key of ['tar.gz', 'installable.tar.gz']) {
      await db
        .insert(versionArchives)
        .values({ versionId: version!.id, format: key, blobDigest: flatSha256 });
    }
    const oldEtag = `"${version!.digest.slice('sha256:'.length)}.installable.tar.gz"`;
    const res = await ctx.app.inject({
      url: `/skills/${name}/bundle`,
      headers: { 'if-none-match': oldEtag },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).not.toBe(oldEtag);
    expect(sha256Hex(res.rawPayload)).not.toBe(flatSha256);
    const entries = await readArchive(res.rawPayload, 'tar.gz', DEFAULT_LIMITS);
    expect(entries.every((file) => file.path.startsWith(`${name}/`))).toBe(true);
    // The old rows stay as they were (nothing reads them); the new layout is stored beside them.
    const keys = await db
      .select({ key: versionArchives.format })
      .from(versionArchives)
      .where(eq(versionArchives.versionId, version!.id));
    expect(keys.map((row) => row.key).sort()).toEqual(
      [
        'installable.tar.gz',
        'installable.tar.gz+folder',
        'installable.zip',
        'tar.gz',
        'tar.gz+folder',
        'zip',
      ].sort(),
    );
  });
});
