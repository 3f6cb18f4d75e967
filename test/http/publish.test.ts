import { gunzipSync, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTarGz, writeZip } from '../../src/bundle/archive-write.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { files, multipartBody, publish, skillMd, type UploadFormat, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { expectProblem } from '../helpers/problem.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const PROBLEM_JSON = /^application\/problem\+json/;

interface Issue {
  path: string;
  detail: string;
}

function inject(method: 'GET' | 'POST', url: string, payload?: Buffer | string, contentType?: string) {
  return ctx.app.inject({
    method,
    url,
    headers: { ...adminAuth, ...(contentType ? { 'content-type': contentType } : {}) },
    ...(payload === undefined ? {} : { payload }),
  });
}

async function detail(name: string, query = '') {
  return ctx.app.inject(`/skills/${name}${query}`);
}

async function versionsOf(name: string): Promise<{ version: string; yanked: boolean; tags: string[] }[]> {
  const res = await ctx.app.inject(`/skills/${name}/versions`);
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function catalogueNames(): Promise<string[]> {
  const res = await ctx.app.inject('/skills?limit=500');
  expect(res.statusCode).toBe(200);
  return (res.json().items as { name: string }[]).map((item) => item.name).sort();
}

/** A skill with nested files, executable script and a binary asset. */
function richBundle(name: string): BundleFile[] {
  return files({
    'SKILL.md': skillMd({ name, description: 'Converts documents; use when asked to convert files.' }),
    'references/api.md': '# API\n\nCall `convert(path)`.\n',
    'scripts/run.sh': '#!/bin/sh\necho converting "$1"\n',
    'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]),
  });
}

function wrapInFolder(folder: string, bundle: BundleFile[]): BundleFile[] {
  return bundle.map((file) => ({ ...file, path: `${folder}/${file.path}` }));
}

/** A tar.gz written without any path validation, to send what hostile tools would. */
async function rawTarGz(entries: { name: string; body: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) pack.entry({ name: entry.name, type: 'file', mode: 0o644 }, entry.body);
  pack.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

describe('POST /skills: upload formats', () => {
  it.each(['tar.gz', 'zip', 'multipart'] as const)(
    'publishes a %s bundle with nested files',
    async (format) => {
      const name = uniqueName(`fmt-${format.replace('.', '')}`);
      const bundle = richBundle(name);
      const res = await publish(ctx.app, bundle, { format });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({
        name,
        version: '1.0.0',
        created: true,
        digest: bundleDigest(bundle),
      });
      expect(res.json().digest).toMatch(/^sha256:[0-9a-f]{64}$/);

      const meta = await detail(name);
      expect(meta.statusCode).toBe(200);
      expect(meta.json().files.map((file: { path: string }) => file.path)).toEqual([
        'SKILL.md',
        'assets/logo.png',
        'references/api.md',
        'scripts/run.sh',
      ]);
      const script = await ctx.app.inject(`/skills/${name}/files/scripts/run.sh`);
      expect(script.statusCode).toBe(200);
      expect(script.body).toBe('#!/bin/sh\necho converting "$1"\n');
      const png = await ctx.app.inject(`/skills/${name}/files/assets/logo.png`);
      expect(Buffer.compare(png.rawPayload, Buffer.from(bundle[3]!.bytes))).toBe(0);
    },
  );

  it('publishes a .skill file (a zip) sent as application/octet-stream', async () => {
    const name = uniqueName('dotskill');
    const bundle = richBundle(name);
    const zip = await writeZip(wrapInFolder(name, bundle));
    const res = await inject('POST', '/skills', zip, 'application/octet-stream');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name, version: '1.0.0', created: true, digest: bundleDigest(bundle) });
    expect((await detail(name)).json().files).toHaveLength(4);
  });

  it('publishes a lone SKILL.md sent as text/markdown', async () => {
    const name = uniqueName('lone');
    const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Lone file.' }) }), {
      format: 'markdown',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name, version: '1.0.0', created: true });
    const meta = await detail(name);
    expect(meta.json().files.map((file: { path: string }) => file.path)).toEqual(['SKILL.md']);
  });

  it('accepts multipart parts under any field name', async () => {
    const name = uniqueName('anyfield');
    const bundle = files({
      'SKILL.md': skillMd({ name, description: 'Field names do not matter.' }),
      'references/deep/notes.md': 'notes',
    });
    const { body, contentType } = multipartBody(bundle, 'file');
    const res = await inject('POST', '/skills', body, contentType);
    expect(res.statusCode).toBe(201);
    expect(res.json().digest).toBe(bundleDigest(bundle));
    const notes = await ctx.app.inject(`/skills/${name}/files/references/deep/notes.md`);
    expect(notes.body).toBe('notes');
  });

  it.each(['tar.gz', 'zip', 'multipart'] as const)(
    'strips the one top folder holding SKILL.md (%s)',
    async (format) => {
      const name = uniqueName('folder');
      const bundle = files({
        'SKILL.md': skillMd({ name, description: 'Wrapped in a folder.' }),
        'references/api.md': 'api',
      });
      const res = await publish(ctx.app, wrapInFolder(name, bundle), { format });
      expect(res.statusCode).toBe(201);
      expect(res.json().digest).toBe(bundleDigest(bundle));
      // Folder named like the skill: nothing to warn about.
      expect(res.json().warnings).toEqual([]);
      const paths = (await detail(name)).json().files.map((file: { path: string }) => file.path);
      expect(paths).toEqual(['SKILL.md', 'references/api.md']);
    },
  );

  it('gives the same digest for the same files whatever the upload format', async () => {
    const name = uniqueName('same-digest');
    const single = files({ 'SKILL.md': skillMd({ name, description: 'One file, five ways.' }) });
    const expected = bundleDigest(single);
    const formats: UploadFormat[] = ['tar.gz', 'zip', 'multipart', 'markdown'];
    const answers = [];
    for (const format of formats) answers.push(await publish(ctx.app, single, { format }));
    answers.push(await publish(ctx.app, wrapInFolder(name, single), { format: 'zip' }));
    answers.push(await inject('POST', '/skills', await writeZip(single), 'application/octet-stream'));
    expect(answers.map((res) => res.statusCode)).toEqual([201, 200, 200, 200, 200, 200]);
    for (const res of answers) expect(res.json()).toMatchObject({ name, version: '1.0.0', digest: expected });
    expect(await versionsOf(name)).toHaveLength(1);

    const many = richBundle(uniqueName('same-digest-many'));
    const digests = new Set<string>();
    for (const format of ['tar.gz', 'zip', 'multipart'] as const) {
      digests.add((await publish(ctx.app, many, { format })).json().digest);
      digests.add((await publish(ctx.app, wrapInFolder('wrapper', many), { format })).json().digest);
    }
    expect([...digests]).toEqual([bundleDigest(many)]);
  });
});

describe('POST /skills: archives are recognised by their bytes', () => {
  it.each([
    ['a tar.gz sent as application/octet-stream', 'tar.gz', 'application/octet-stream'],
    ['a zip sent as application/gzip', 'zip', 'application/gzip'],
    ['a tar.gz sent as application/x-gzip', 'tar.gz', 'application/x-gzip'],
    ['a zip sent as application/x-zip-compressed', 'zip', 'application/x-zip-compressed'],
  ] as const)('publishes %s', async (_label, format, type) => {
    const name = uniqueName('sniff');
    const bundle = richBundle(name);
    const body = format === 'zip' ? await writeZip(bundle) : await writeTarGz(bundle);
    const res = await inject('POST', '/skills', body, type);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().digest).toBe(bundleDigest(bundle));
  });

  it('publishes a plain tar and a text/markdown body with a charset parameter', async () => {
    const name = uniqueName('plain-tar');
    const bundle = richBundle(name);
    const tarBytes = gunzipSync(await writeTarGz(bundle));
    const res = await inject('POST', '/skills', tarBytes, 'application/x-tar');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().digest).toBe(bundleDigest(bundle));

    const lone = uniqueName('charset');
    const text = skillMd({ name: lone, description: 'Charset parameter.' });
    const md = await inject('POST', '/skills', text, 'text/markdown; charset=utf-8');
    expect(md.statusCode, md.body).toBe(201);
    expect(md.json().digest).toBe(bundleDigest(files({ 'SKILL.md': text })));
  });
});

describe('POST /skills: concurrent publishes', () => {
  it('identical concurrent publishes create one version', async () => {
    const name = uniqueName('race-same');
    const bundle = richBundle(name);
    const answers = await Promise.all(Array.from({ length: 6 }, () => publish(ctx.app, bundle)));
    const codes = answers.map((res) => res.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 201]);
    for (const res of answers) expect(res.json()).toMatchObject({ name, version: '1.0.0' });
    expect(await versionsOf(name)).toHaveLength(1);
  });

  it('different concurrent publishes each get their own next patch', async () => {
    const name = uniqueName('race-diff');
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: `Racer ${i}.` }) })),
      ),
    );
    expect(answers.map((res) => res.statusCode)).toEqual([201, 201, 201, 201, 201]);
    const versions = answers.map((res) => res.json().version as string).sort();
    expect(versions).toEqual(['1.0.0', '1.0.1', '1.0.2', '1.0.3', '1.0.4']);
    expect((await detail(name)).json().version).toBe('1.0.4');
  });
});

describe('POST /skills: idempotence and conflicts', () => {
  it('republishing identical content answers 200 with the existing version and stores nothing new', async () => {
    const name = uniqueName('idem');
    const bundle = richBundle(name);
    const first = await publish(ctx.app, bundle);
    expect(first.statusCode).toBe(201);
    const again = await publish(ctx.app, bundle);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      name,
      version: first.json().version,
      digest: first.json().digest,
      created: false,
    });
    // Also idempotent with the same explicit version.
    const explicit = await publish(ctx.app, bundle, { query: 'version=1.0.0' });
    expect(explicit.statusCode).toBe(200);
    expect(explicit.json()).toMatchObject({ version: '1.0.0', created: false });
    expect(await versionsOf(name)).toHaveLength(1);
  });

  it('refuses different content under an existing explicit version with a 409 problem', async () => {
    const name = uniqueName('conflict');
    const one = files({ 'SKILL.md': skillMd({ name, description: 'First.' }) });
    const two = files({ 'SKILL.md': skillMd({ name, description: 'Second, different.' }) });
    expect((await publish(ctx.app, one, { query: 'version=1.4.0' })).statusCode).toBe(201);
    const clash = await publish(ctx.app, two, { query: 'version=1.4.0' });
    expect(clash.statusCode).toBe(409);
    expect(clash.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(clash.json()).toMatchObject({ status: 409, title: expect.any(String) });
    expect(clash.json().detail).toContain('1.4.0');

    // The same through metadata.version.
    const three = files({
      'SKILL.md': skillMd({ name, description: 'Third.', extra: 'metadata:\n  version: "1.4.0"' }),
    });
    expect((await publish(ctx.app, three)).statusCode).toBe(409);
    const versions = await versionsOf(name);
    expect(versions.map((entry) => entry.version)).toEqual(['1.4.0']);
    const content = await ctx.app.inject(`/skills/${name}?version=1.4.0`);
    expect(content.json().description).toBe('First.');
  });
});

describe('POST /skills: version sources', () => {
  const variant = (name: string, n: number, extra?: string) =>
    files({ 'SKILL.md': skillMd({ name, description: `Variant ${n}.`, extra }) });

  it('assigns 1.0.0 first and then the next patch after the highest version', async () => {
    const name = uniqueName('nextpatch');
    expect((await publish(ctx.app, variant(name, 1))).json().version).toBe('1.0.0');
    expect((await publish(ctx.app, variant(name, 2))).json().version).toBe('1.0.1');
    expect((await publish(ctx.app, variant(name, 3), { query: 'version=1.5.0' })).json().version).toBe(
      '1.5.0',
    );
    expect((await publish(ctx.app, variant(name, 4), { query: 'version=1.2.0' })).json().version).toBe(
      '1.2.0',
    );
    const next = await publish(ctx.app, variant(name, 5));
    expect(next.statusCode).toBe(201);
    expect(next.json().version).toBe('1.5.1');
  });

  it('prefers ?version= over metadata.version over the next patch', async () => {
    const name = uniqueName('sources');
    const withMeta = (n: number, version: string) => variant(name, n, `metadata:\n  version: "${version}"`);
    const fromQuery = await publish(ctx.app, withMeta(1, '2.0.0'), { query: 'version=3.0.0' });
    expect(fromQuery.json()).toMatchObject({ version: '3.0.0', created: true });
    const fromMeta = await publish(ctx.app, withMeta(2, '2.0.0'));
    expect(fromMeta.json()).toMatchObject({ version: '2.0.0', created: true });
    const fromNext = await publish(ctx.app, variant(name, 3));
    expect(fromNext.json()).toMatchObject({ version: '3.0.1', created: true });
    expect((await versionsOf(name)).map((entry) => entry.version)).toEqual(['3.0.1', '3.0.0', '2.0.0']);
  });

  it("coerces metadata.version '1.0' to 1.0.0 with a warning", async () => {
    for (const written of ['"1.0"', '1.0']) {
      const name = uniqueName('coerce');
      const res = await publish(ctx.app, variant(name, 1, `metadata:\n  version: ${written}`));
      expect(res.statusCode).toBe(201);
      expect(res.json().version).toBe('1.0.0');
      const warnings: Issue[] = res.json().warnings;
      expect(warnings.some((w) => w.detail.includes("'1.0'") && w.detail.includes('1.0.0'))).toBe(true);
    }
  });

  it('refuses a ?version= that is not semver with a 400 problem', async () => {
    const name = uniqueName('badversion');
    const res = await publish(ctx.app, variant(name, 1), { query: 'version=banana' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.json().detail).toContain('banana');
    expect((await detail(name)).statusCode).toBe(404);
  });

  it('points ?tag= at the published version', async () => {
    const name = uniqueName('pubtag');
    await publish(ctx.app, variant(name, 1));
    const beta = await publish(ctx.app, variant(name, 2), { query: 'version=2.0.0-beta.1&tag=beta' });
    expect(beta.statusCode).toBe(201);
    const meta = (await detail(name)).json();
    expect(meta.distTags).toEqual({ latest: '1.0.0', beta: '2.0.0-beta.1' });
    const viaTag = await detail(name, '?tag=beta');
    expect(viaTag.json()).toMatchObject({ version: '2.0.0-beta.1', description: 'Variant 2.' });
    // An identical republish with a tag moves the tag without creating anything.
    const again = await publish(ctx.app, variant(name, 1), { query: 'tag=stable' });
    expect(again.json()).toMatchObject({ version: '1.0.0', created: false });
    expect((await detail(name)).json().distTags.stable).toBe('1.0.0');
  });

  it('refuses an invalid ?tag= before storing anything', async () => {
    const name = uniqueName('badtag');
    const res = await publish(ctx.app, variant(name, 1), { query: 'tag=Not%20A%20Tag' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect((await detail(name)).statusCode).toBe(404);
  });
});

describe('POST /skills: warnings', () => {
  it('returns a warning for unknown frontmatter keys and keeps them', async () => {
    const name = uniqueName('unknownkeys');
    const res = await publish(
      ctx.app,
      files({
        'SKILL.md': skillMd({
          name,
          description: 'Has Claude Code keys.',
          extra: 'user-invocable: false\nargument-hint: "[file]"\nmodel: claude-opus',
        }),
      }),
    );
    expect(res.statusCode).toBe(201);
    const warnings: Issue[] = res.json().warnings;
    const unknown = warnings.find((w) => w.detail.includes("'model'"));
    expect(unknown?.detail).toContain("'user-invocable'");
    expect(unknown?.detail).toContain("'argument-hint'");
    const meta = (await detail(name)).json();
    expect(meta.frontmatter).toMatchObject({
      'user-invocable': false,
      'argument-hint': '[file]',
      model: 'claude-opus',
    });
  });

  it('warns when the folder name differs from the skill name', async () => {
    const name = uniqueName('mismatch');
    const bundle = files({ 'SKILL.md': skillMd({ name, description: 'Folder differs.' }) });
    const res = await publish(ctx.app, wrapInFolder('some-other-folder', bundle));
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe(name);
    const warnings: Issue[] = res.json().warnings;
    expect(warnings.some((w) => w.detail.includes('some-other-folder') && w.detail.includes(name))).toBe(
      true,
    );
  });

  it('uses ?name= when the frontmatter has no name, with a warning', async () => {
    const name = uniqueName('fallback');
    const bundle = files({ 'SKILL.md': skillMd({ description: 'Nameless skill.' }) });
    const refused = await publish(ctx.app, bundle, { format: 'markdown' });
    expect(refused.statusCode).toBe(422);
    const res = await publish(ctx.app, bundle, { format: 'markdown', query: `name=${name}` });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe(name);
    expect(
      (res.json().warnings as Issue[]).some((w) => w.path === 'SKILL.md#name' && w.detail.includes(name)),
    ).toBe(true);
    expect((await detail(name)).json().frontmatter.name).toBe(name);
  });

  it('uses the folder name when the frontmatter has no name', async () => {
    const name = uniqueName('foldername');
    const bundle = files({ 'SKILL.md': skillMd({ description: 'Named by its folder.' }) });
    const res = await publish(ctx.app, wrapInFolder(name, bundle), { format: 'zip' });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe(name);
    expect((res.json().warnings as Issue[]).some((w) => w.path === 'SKILL.md#name')).toBe(true);
  });
});

describe('POST /skills: refusals', () => {
  it('refuses an invalid name with 422 and a suggestion', async () => {
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name: 'PDF Tools', description: 'x' }) }),
    );
    const body = await expectProblem(res, 422);
    const errors: Issue[] = body.errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: 'SKILL.md#name' });
    expect(errors[0]!.detail).toContain("try 'pdf-tools'");
  });

  it('refuses a description over 1024 characters with 422', async () => {
    const name = uniqueName('longdesc');
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'a'.repeat(1025) }) }),
    );
    const body = await expectProblem(res, 422);
    expect(body.errors).toEqual([{ path: 'SKILL.md#description', detail: expect.stringContaining('1024') }]);
    expect((await detail(name)).statusCode).toBe(404);
    // Exactly 1024 is fine.
    const ok = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'a'.repeat(1024) }) }),
    );
    expect(ok.statusCode).toBe(201);
  });

  it('names every problem at once in errors[]', async () => {
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name: 'Bad--Name', description: 'b'.repeat(2000) }) }),
    );
    const body = await expectProblem(res, 422);
    const paths = (body.errors as Issue[]).map((issue) => issue.path).sort();
    expect(paths).toEqual(['SKILL.md#description', 'SKILL.md#name']);
    expect((body.errors as Issue[]).find((issue) => issue.path === 'SKILL.md#name')!.detail).toContain(
      "try 'bad-name'",
    );
  });

  it('refuses unparseable YAML with 422', async () => {
    const name = uniqueName('badyaml');
    const text = `---\nname: ${name}\ndescription: [unclosed\n  - : : {\n---\n# Body\n`;
    const res = await publish(ctx.app, files({ 'SKILL.md': text }));
    const body = await expectProblem(res, 422);
    expect(body.errors.length).toBeGreaterThan(0);
    expect(body.errors[0].path).toMatch(/^SKILL\.md/);
    expect((await detail(name)).statusCode).toBe(404);
  });

  it('refuses a bundle without SKILL.md with 422', async () => {
    const res = await publish(ctx.app, files({ 'README.md': '# Not a skill', 'scripts/run.sh': 'echo' }));
    const body = await expectProblem(res, 422);
    expect(body.errors).toEqual([{ path: 'SKILL.md', detail: expect.stringContaining('SKILL.md') }]);
  });

  it.each([
    ['application/json', Buffer.from(JSON.stringify({ name: 'x', description: 'y' }))],
    ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
    ['application/x-www-form-urlencoded', Buffer.from('name=x&description=y')],
  ])('answers 415 problem+json for %s', async (type, payload) => {
    const res = await inject('POST', '/skills', payload, type);
    const body = await expectProblem(res, 415);
    expect(body.detail).toContain('application/gzip');
  });

  it('answers 415 problem+json for a POST without a body or content type', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/skills', headers: adminAuth });
    const body = await expectProblem(res, 415);
    expect(body.detail).toContain('multipart/form-data');
  });

  it('answers 400 for garbage sent as application/gzip or application/zip', async () => {
    for (const type of ['application/gzip', 'application/zip', 'application/octet-stream']) {
      const garbage = await inject('POST', '/skills', Buffer.from('this is not an archive at all'), type);
      await expectProblem(garbage, 400);
    }
    // Right magic bytes, broken stream.
    const broken = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(64, 0x41)]);
    await expectProblem(await inject('POST', '/skills', broken, 'application/gzip'), 400);
    const truncatedZip = (
      await writeZip(files({ 'SKILL.md': skillMd({ name: 'x', description: 'y' }) }))
    ).subarray(0, 40);
    await expectProblem(await inject('POST', '/skills', truncatedZip, 'application/zip'), 400);
  });

  it('refuses an archive entry escaping the bundle with 400', async () => {
    const name = uniqueName('escape');
    const archive = await rawTarGz([
      { name: 'SKILL.md', body: skillMd({ name, description: 'Hostile.' }) },
      { name: '../../etc/evil.sh', body: 'rm -rf /' },
    ]);
    const res = await inject('POST', '/skills', archive, 'application/gzip');
    await expectProblem(res, 400);
    expect((await detail(name)).statusCode).toBe(404);
  });

  it('leaves nothing stored after any refused publish', async () => {
    const before = await catalogueNames();
    const revisionBefore = (await ctx.app.inject('/skills?limit=500')).headers.etag;
    const name = uniqueName('refused');
    const attempts = [
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'c'.repeat(1500) }) })),
      await publish(ctx.app, files({ 'SKILL.md': `---\nname: ${name}\ndescription: : :\n  bad: [\n---\n` })),
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'ok' }) }), {
        query: 'version=not-semver',
      }),
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'ok' }) }), {
        query: `name=${name}-other`,
      }),
      await publish(
        ctx.app,
        files({ 'SKILL.md': skillMd({ name, description: 'ok', extra: 'metadata:\n  version: banana' }) }),
      ),
      await inject('POST', '/skills', Buffer.from('junk'), 'application/gzip'),
      await inject('POST', '/skills', Buffer.from('{}'), 'application/json'),
    ];
    for (const res of attempts) {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    expect(await catalogueNames()).toEqual(before);
    expect((await ctx.app.inject('/skills?limit=500')).headers.etag).toBe(revisionBefore);
    const missing = await detail(name);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(PROBLEM_JSON);
    expect((await ctx.app.inject(`/skills/${name}/versions`)).statusCode).toBe(404);
  });

  it('a 409 leaves the existing version and catalogue untouched', async () => {
    const name = uniqueName('conflict-trace');
    const first = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Original.' }) }), {
      query: 'version=1.0.0',
    });
    expect(first.statusCode).toBe(201);
    const etag = (await ctx.app.inject('/skills?limit=500')).headers.etag;
    const clash = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Changed.' }) }), {
      query: 'version=1.0.0',
    });
    expect(clash.statusCode).toBe(409);
    expect((await ctx.app.inject('/skills?limit=500')).headers.etag).toBe(etag);
    const meta = (await detail(name)).json();
    expect(meta).toMatchObject({ version: '1.0.0', digest: first.json().digest, description: 'Original.' });
  });
});
