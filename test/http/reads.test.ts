import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive, readServedArchive } from '../../src/bundle/archive-read.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import { type BundleFile, DEFAULT_LIMITS } from '../../src/bundle/types.js';
import type { CataloguePage } from '../../src/wire/types.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { sha256Digest } from '../helpers/hashing.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const PROBLEM_JSON = /^application\/problem\+json/;

/** A lowercase word no other test uses, for searches and names. */
function uniqueWord(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2, 10).replace(/[0-9]/g, 'x')}`;
}

async function published(bundle: BundleFile[], query?: string) {
  const res = await publish(ctx.app, bundle, { query });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { name: string; version: string; digest: string };
}

async function catalogue(query: string): Promise<CataloguePage> {
  const res = await ctx.app.inject(`/skills?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Follows nextCursor until the end, returning every page. */
async function walk(query: string): Promise<CataloguePage[]> {
  const pages: CataloguePage[] = [];
  let cursor: string | null = null;
  do {
    const page = await catalogue(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(1000);
  } while (cursor);
  return pages;
}

const sha256 = sha256Digest;

describe('GET /skills (catalogue)', () => {
  it('lists items with name, description, version, tags, digest, updatedAt and token counts', async () => {
    const name = uniqueName('cat');
    const result = await published(
      files({
        'SKILL.md': skillMd({ name, description: 'Summarises long PDF reports into bullet points.' }),
      }),
    );
    const { items } = await catalogue('limit=500');
    const item = items.find((candidate) => candidate.name === name);
    expect(item).toEqual({
      name,
      description: 'Summarises long PDF reports into bullet points.',
      version: '1.0.0',
      tags: ['latest'],
      digest: result.digest,
      updatedAt: expect.any(String),
      tokens: { description: expect.any(Number), body: expect.any(Number) },
      scan: { verdict: 'pass' },
    });
    expect(Number.isNaN(Date.parse(item!.updatedAt))).toBe(false);
    expect(Math.abs(Date.parse(item!.updatedAt) - Date.now())).toBeLessThan(10 * 60_000);
    expect(item!.tokens.description).toBeGreaterThan(0);
    expect(item!.tokens.body).toBeGreaterThan(0);
  });

  it('longer descriptions and bodies cost more tokens', async () => {
    const short = uniqueName('tok-short');
    const long = uniqueName('tok-long');
    await published(files({ 'SKILL.md': skillMd({ name: short, description: 'Short.', body: 'Hi.\n' }) }));
    await published(
      files({
        'SKILL.md': skillMd({
          name: long,
          description: 'A much longer description that goes on for a while about many things. '.repeat(5),
          body: 'A long body paragraph with plenty of words in it. '.repeat(50),
        }),
      }),
    );
    const { items } = await catalogue('limit=500');
    const a = items.find((item) => item.name === short)!;
    const b = items.find((item) => item.name === long)!;
    expect(b.tokens.description).toBeGreaterThan(a.tokens.description);
    expect(b.tokens.body).toBeGreaterThan(a.tokens.body * 10);
  });

  it('walks every page with a cursor, without duplicates or gaps', async () => {
    const word = uniqueWord('pager');
    const names = [];
    for (let i = 0; i < 5; i++) {
      const name = `${word}-${i}`;
      names.push(name);
      await published(
        files({ 'SKILL.md': skillMd({ name, description: `Paged skill ${word} number ${i}.` }) }),
      );
    }
    const all = (await catalogue('limit=500')).items.map((item) => item.name);
    expect(all).toEqual(expect.arrayContaining(names));

    const pages = await walk('limit=2');
    for (const page of pages.slice(0, -1)) expect(page.items).toHaveLength(2);
    const walked = pages.flatMap((page) => page.items.map((item) => item.name));
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).toEqual(all);

    // Search results page too (the cursor there is different), exactly our five.
    const searchPages = await walk(`q=${word}&limit=2`);
    expect(searchPages.map((page) => page.items.length)).toEqual([2, 2, 1]);
    const found = searchPages.flatMap((page) => page.items.map((item) => item.name));
    expect(found.slice().sort()).toEqual(names);
  });

  it('q with search-syntax and LIKE characters answers 200, never 500', async () => {
    for (const q of [
      '%',
      '_',
      '\\',
      "'",
      '"',
      'a:b',
      '()',
      '!',
      '-',
      'a & b | c',
      'foo*',
      '<script>',
      '🙂',
      'OR',
    ]) {
      const res = await ctx.app.inject(`/skills?q=${encodeURIComponent(q)}`);
      expect(res.statusCode, q).toBe(200);
      expect(Array.isArray(res.json().items)).toBe(true);
    }
    // % and _ are literal, not wildcards.
    const names = (await catalogue('q=%25&limit=500')).items.map((item) => item.name);
    expect(names).toEqual([]);
    const tooLong = await ctx.app.inject(`/skills?q=${'a'.repeat(4001)}`);
    expect(tooLong.statusCode).toBe(400);
  });

  it('refuses an invalid cursor with a 400 problem', async () => {
    for (const cursor of ['garbage', 'eyJub3BlIjp0cnVlfQ', '%%%']) {
      const res = await ctx.app.inject(`/skills?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.json().detail).toContain('cursor');
    }
  });

  it('refuses limit over 500, under 1 or not a number with 400', async () => {
    for (const limit of ['501', '0', '-1', 'ten']) {
      const res = await ctx.app.inject(`/skills?limit=${limit}`);
      expect(res.statusCode, limit).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    }
    expect((await ctx.app.inject('/skills?limit=500')).statusCode).toBe(200);
  });

  it('q finds by a word of the description and by (partial) name, not unrelated skills', async () => {
    const word = uniqueWord('wombat');
    const target = `${word}-converter`;
    const other = uniqueName('unrelated');
    await published(
      files({
        'SKILL.md': skillMd({
          name: target,
          description: 'Turns quarterly spreadsheets into slide decks with charts.',
        }),
      }),
    );
    await published(
      files({ 'SKILL.md': skillMd({ name: other, description: 'Plays chess against itself.' }) }),
    );

    const search = async (q: string) =>
      (await catalogue(`q=${encodeURIComponent(q)}&limit=500`)).items.map((item) => item.name);
    // Description words, including stemmed forms.
    expect(await search('spreadsheets')).toContain(target);
    expect(await search('spreadsheet')).toContain(target);
    expect(await search('quarterly spreadsheets')).toContain(target);
    // Name, whole or partial.
    expect(await search(target)).toEqual([target]);
    expect(await search(word)).toEqual([target]);
    expect(await search(`${word}-conv`)).toEqual([target]);
    // Not unrelated skills.
    expect(await search('spreadsheets')).not.toContain(other);
    expect(await search('chess')).toContain(other);
    expect(await search('chess')).not.toContain(target);
    expect(await search(uniqueWord('nothing'))).toEqual([]);
  });

  it('tag= lists only skills carrying that dist-tag, at the tagged version', async () => {
    const tag = uniqueWord('chan');
    const tagged = uniqueName('tagged');
    const plain = uniqueName('untagged');
    await published(
      files({ 'SKILL.md': skillMd({ name: tagged, description: 'Tagged v1.' }) }),
      `tag=${tag}`,
    );
    await published(files({ 'SKILL.md': skillMd({ name: tagged, description: 'Tagged v2.' }) }));
    await published(files({ 'SKILL.md': skillMd({ name: plain, description: 'Not tagged.' }) }));

    const { items } = await catalogue(`tag=${tag}&limit=500`);
    expect(items.map((item) => item.name)).toEqual([tagged]);
    expect(items[0]).toMatchObject({ version: '1.0.0', description: 'Tagged v1.', tags: [tag] });

    const latest = (await catalogue('limit=500')).items.find((item) => item.name === tagged);
    expect(latest).toMatchObject({ version: '1.0.1', description: 'Tagged v2.', tags: ['latest'] });
    expect((await catalogue('tag=latest&limit=500')).items.map((item) => item.name)).toContain(plain);
  });
});

describe('GET /skills/{name}', () => {
  it('returns frontmatter (unknown keys verbatim), files with digests, dist-tags and versions', async () => {
    const name = uniqueName('detail');
    const extra = [
      'license: MIT',
      'allowed-tools: Read Grep',
      'context: fork',
      'disable-model-invocation: true',
      'user-invocable: false',
      'argument-hint: "[path] [format]"',
      'model: claude-sonnet',
      'tags: [pdf, reports]',
      'hooks:',
      '  PreToolUse:',
      '    - matcher: Bash',
      'metadata:',
      '  author: tester',
      '  version: "2.1.0"',
    ].join('\n');
    const api = '# API\n\nDetails.\n';
    const bundle = files({
      'SKILL.md': skillMd({ name, description: 'Detail test skill.', extra }),
      'references/api.md': api,
    });
    const result = await published(bundle);
    expect(result.version).toBe('2.1.0');

    const res = await ctx.app.inject(`/skills/${name}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const meta = res.json();
    expect(meta).toMatchObject({
      name,
      version: '2.1.0',
      description: 'Detail test skill.',
      digest: result.digest,
      yanked: false,
      distTags: { latest: '2.1.0' },
    });
    expect(meta.frontmatter).toEqual({
      name,
      description: 'Detail test skill.',
      license: 'MIT',
      'allowed-tools': 'Read Grep',
      context: 'fork',
      'disable-model-invocation': true,
      'user-invocable': false,
      'argument-hint': '[path] [format]',
      model: 'claude-sonnet',
      tags: ['pdf', 'reports'],
      hooks: { PreToolUse: [{ matcher: 'Bash' }] },
      metadata: { author: 'tester', version: '2.1.0' },
    });
    const skillBytes = bundle.find((file) => file.path === 'SKILL.md')!.bytes;
    expect(meta.files).toEqual([
      { path: 'SKILL.md', size: skillBytes.byteLength, digest: sha256(skillBytes) },
      { path: 'references/api.md', size: Buffer.byteLength(api), digest: sha256(Buffer.from(api)) },
    ]);
    expect(meta.versions).toEqual([
      {
        version: '2.1.0',
        digest: result.digest,
        createdAt: expect.any(String),
        yanked: false,
        tags: ['latest'],
      },
    ]);
  });

  it('selects versions by version= and tag=, and refuses both at once', async () => {
    const name = uniqueName('select');
    await published(files({ 'SKILL.md': skillMd({ name, description: 'One.' }) }));
    await published(files({ 'SKILL.md': skillMd({ name, description: 'Two.' }) }));
    expect((await ctx.app.inject(`/skills/${name}`)).json().description).toBe('Two.');
    expect((await ctx.app.inject(`/skills/${name}?version=1.0.0`)).json().description).toBe('One.');
    expect((await ctx.app.inject(`/skills/${name}?tag=latest`)).json().version).toBe('1.0.1');

    const unknownVersion = await ctx.app.inject(`/skills/${name}?version=9.9.9`);
    expect(unknownVersion.statusCode).toBe(404);
    expect(unknownVersion.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(unknownVersion.json().detail).toContain('1.0.1');
    const unknownTag = await ctx.app.inject(`/skills/${name}?tag=nightly`);
    expect(unknownTag.statusCode).toBe(404);
    expect(unknownTag.json().detail).toContain('latest');
    const both = await ctx.app.inject(`/skills/${name}?version=1.0.0&tag=latest`);
    expect(both.statusCode).toBe(400);
    expect(both.headers['content-type']).toMatch(PROBLEM_JSON);
  });
});

describe('GET /skills/{name}/content (layer 2)', () => {
  const body =
    '# Report helper\n\nUse <b>bold</b> & keep "quotes" and \'apostrophes\'.\n\n- step $ARGUMENTS\n';

  async function withBody() {
    const name = uniqueName('content');
    const text = `---\nname: ${name}\ndescription: Content test.\nmodel: claude-opus\n---\n${body}`;
    const result = await published(files({ 'SKILL.md': text, 'scripts/run.sh': 'echo hi\n' }));
    return { name, result, text };
  }

  it('returns the body without frontmatter as text/markdown; charset=utf-8', async () => {
    const { name } = await withBody();
    const res = await ctx.app.inject(`/skills/${name}/content`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body).toBe(body);
    expect(res.body).not.toContain('description:');
    const explicit = await ctx.app.inject(`/skills/${name}/content?format=markdown`);
    expect(explicit.body).toBe(body);
  });

  it('keeps non-ASCII text intact', async () => {
    const name = uniqueName('utf8');
    const text = `---\nname: ${name}\ndescription: Ünïcödé — ok.\n---\nGrüße, 世界 🌍\n`;
    await published(files({ 'SKILL.md': text }));
    const res = await ctx.app.inject(`/skills/${name}/content`);
    expect(res.rawPayload.toString('utf8')).toBe('Grüße, 世界 🌍\n');
  });

  it('format=json gives name, version, digest, frontmatter, body and files', async () => {
    const { name, result } = await withBody();
    const res = await ctx.app.inject(`/skills/${name}/content?format=json`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      name,
      version: '1.0.0',
      digest: result.digest,
      frontmatter: { name, description: 'Content test.', model: 'claude-opus' },
      body,
      files: [
        {
          path: 'SKILL.md',
          size: expect.any(Number),
          digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        },
        { path: 'scripts/run.sh', size: 8, digest: sha256(Buffer.from('echo hi\n')) },
      ],
    });
  });

  it('format=xml wraps the escaped body in <skill name="...">', async () => {
    const { name } = await withBody();
    const res = await ctx.app.inject(`/skills/${name}/content?format=xml`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/xml; charset=utf-8/);
    const xml = res.body;
    expect(xml.startsWith(`<skill name="${name}">`)).toBe(true);
    expect(xml.trimEnd().endsWith('</skill>')).toBe(true);
    // Only what XML requires is escaped: `&` and `<`; `>`, quotes and apostrophes read as written.
    expect(xml).toContain(`Use &lt;b>bold&lt;/b> &amp; keep "quotes" and 'apostrophes'.`);
    expect(xml).not.toContain('<b>');
    expect(xml).not.toMatch(/&(?!amp;|lt;|gt;|quot;|apos;)/);
    // Unescaping gives the body back.
    const inner = xml.slice(xml.indexOf('>') + 1, xml.lastIndexOf('</skill>'));
    const unescaped = inner
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
    expect(unescaped.trim()).toBe(body.trim());
  });

  it('refuses an unknown format with 400', async () => {
    const { name } = await withBody();
    const res = await ctx.app.inject(`/skills/${name}/content?format=yaml`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
  });
});

describe('GET /skills/{name}/files/{path} (layer 3)', () => {
  const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const png = Buffer.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0x00,
  ]);
  let name: string;
  let bundle: BundleFile[];

  beforeAll(async () => {
    name = uniqueName('files');
    bundle = files({
      'SKILL.md': skillMd({ name, description: 'Files test.' }),
      'references/api.md': '# API\n\nCall it.\n',
      'references/deep/nested/notes.md': 'deep notes\n',
      'data/config.json': '{"key": [1, 2, 3]}\n',
      'assets/logo.png': png,
      'assets/all-bytes.bin': allBytes,
      'assets/blob.qqzz': Buffer.from([0, 1, 2, 3]),
      'scripts/run.sh': '#!/bin/sh\necho hi\n',
    });
    await published(bundle);
  });

  it('returns the exact bytes of every file', async () => {
    for (const file of bundle) {
      const res = await ctx.app.inject(`/skills/${name}/files/${file.path}`);
      expect(res.statusCode, file.path).toBe(200);
      expect(Buffer.compare(res.rawPayload, Buffer.from(file.bytes)), file.path).toBe(0);
      expect(Number(res.headers['content-length']), file.path).toBe(file.bytes.byteLength);
    }
  });

  it('returns a binary file with all 256 byte values unchanged', async () => {
    const res = await ctx.app.inject(`/skills/${name}/files/assets/all-bytes.bin`);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload).toHaveLength(256);
    expect([...res.rawPayload]).toEqual([...allBytes]);
    expect(res.headers['content-type']).toBe('application/octet-stream');
  });

  it.each([
    ['SKILL.md', /^text\/markdown; charset=utf-8$/],
    ['references/api.md', /^text\/markdown; charset=utf-8$/],
    ['data/config.json', /^application\/json(; charset=utf-8)?$/],
    ['assets/logo.png', /^image\/png$/],
    ['assets/blob.qqzz', /^application\/octet-stream$/],
    ['scripts/run.sh', /^(application\/x-sh|text\/x-shellscript|text\/plain)(; charset=utf-8)?$/],
  ])('serves %s with a fitting content type', async (path, type) => {
    const res = await ctx.app.inject(`/skills/${name}/files/${path}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves paths with spaces and non-ASCII characters, percent-encoded in the URL', async () => {
    const spaced = uniqueName('spaced');
    await published(
      files({
        'SKILL.md': skillMd({ name: spaced, description: 'Odd paths.' }),
        'references/my notes.md': 'spaces\n',
        'références/größe.md': 'unicode\n',
      }),
    );
    const a = await ctx.app.inject(`/skills/${spaced}/files/references/my%20notes.md`);
    expect(a.statusCode, a.body).toBe(200);
    expect(a.body).toBe('spaces\n');
    const b = await ctx.app.inject(
      `/skills/${spaced}/files/${encodeURIComponent('références')}/${encodeURIComponent('größe.md')}`,
    );
    expect(b.statusCode, b.body).toBe(200);
    expect(b.body).toBe('unicode\n');
  });

  it('serves deeply nested paths', async () => {
    const res = await ctx.app.inject(`/skills/${name}/files/references/deep/nested/notes.md`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('deep notes\n');
  });

  it('answers 404 for an unknown file, listing the files there are', async () => {
    const res = await ctx.app.inject(`/skills/${name}/files/references/missing.md`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    const problem = res.json();
    expect(problem.detail).toContain('references/missing.md');
    expect(problem.detail).toContain('references/api.md');
    expect(problem.files).toEqual(
      expect.arrayContaining(['SKILL.md', 'references/api.md', 'scripts/run.sh']),
    );
    // A folder is not a file.
    expect((await ctx.app.inject(`/skills/${name}/files/references`)).statusCode).toBe(404);
  });

  it.each([
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e/x',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '..%5c..%5cetc%5cpasswd',
    'references/..%2F..%2F..%2Fetc%2Fpasswd',
    '%2Fetc%2Fpasswd',
    '....%2F%2F....%2F%2Fetc%2Fpasswd',
    'references%2F..%2FSKILL.md',
  ])('never serves anything outside the bundle for /files/%s', async (path) => {
    const res = await ctx.app.inject(`/skills/${name}/files/${path}`);
    expect([400, 404]).toContain(res.statusCode);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.body).not.toContain('root:');
  });

  it('never serves anything outside the bundle for raw ../ segments', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/skills/${name}/files/../../../../etc/passwd` });
    expect(res.statusCode).not.toBe(200);
    expect(res.body).not.toContain('root:');
  });
});

describe('GET /skills/{name}/bundle', () => {
  async function published755() {
    const name = uniqueName('bundle');
    const bundle: BundleFile[] = [
      ...files({
        'SKILL.md': skillMd({ name, description: 'Bundle test.' }),
        'references/api.md': '# API\n',
        'assets/all-bytes.bin': Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      }),
      { path: 'scripts/run.sh', bytes: Buffer.from('#!/bin/sh\necho run\n'), mode: 0o755 },
    ];
    const result = await published(bundle);
    return { name, bundle, result };
  }

  function expectSameFiles(actual: BundleFile[], expected: BundleFile[]) {
    const byPath = (list: BundleFile[]) => [...list].sort((a, b) => (a.path < b.path ? -1 : 1));
    const got = byPath(actual);
    const want = byPath(expected);
    expect(got.map((file) => file.path)).toEqual(want.map((file) => file.path));
    for (const [i, file] of got.entries()) {
      expect(Buffer.compare(Buffer.from(file.bytes), Buffer.from(want[i]!.bytes)), file.path).toBe(0);
    }
  }

  it('serves a tar.gz with every file byte for byte in one folder named after the skill, deterministically', async () => {
    const { name, bundle, result } = await published755();
    const res = await ctx.app.inject(`/skills/${name}/bundle`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/(gzip|x-gzip|tar\+gzip)/);
    expect(res.headers['content-disposition']).toContain(`${name}-1.0.0.tar.gz`);
    // `tar -xzf` makes one folder, the skill's: every entry is inside it.
    const entries = await readArchive(res.rawPayload, 'tar.gz', DEFAULT_LIMITS);
    expect(entries.map((file) => file.path).sort()).toEqual(
      bundle.map((file) => `${name}/${file.path}`).sort(),
    );
    const extracted = await readServedArchive(res.rawPayload, 'tar.gz', DEFAULT_LIMITS);
    expectSameFiles(extracted, bundle);
    expect(extracted.find((file) => file.path === 'scripts/run.sh')!.mode).toBe(0o755);
    expect(extracted.find((file) => file.path === 'SKILL.md')!.mode).toBe(0o644);
    expect(bundleDigest(extracted)).toBe(result.digest);

    const again = await ctx.app.inject(`/skills/${name}/bundle?format=tar.gz`);
    expect(Buffer.compare(again.rawPayload, res.rawPayload)).toBe(0);
  });

  it('serves a zip with format=zip, byte for byte with SKILL.md at its root, deterministically', async () => {
    const { name, bundle, result } = await published755();
    const res = await ctx.app.inject(`/skills/${name}/bundle?format=zip`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/zip/);
    expect(res.headers['content-disposition']).toContain(`${name}-1.0.0.zip`);
    // Installers that read the discovery index's zip want SKILL.md at the root.
    const extracted = await readArchive(res.rawPayload, 'zip', DEFAULT_LIMITS);
    expectSameFiles(extracted, bundle);
    expect(extracted.find((file) => file.path === 'scripts/run.sh')!.mode).toBe(0o755);
    expect(bundleDigest(extracted)).toBe(result.digest);
    const again = await ctx.app.inject(`/skills/${name}/bundle?format=zip`);
    expect(Buffer.compare(again.rawPayload, res.rawPayload)).toBe(0);
  });

  it('a downloaded bundle publishes back to the same digest, in either format', async () => {
    const { name, result } = await published755();
    for (const [format, contentType] of [
      ['tar.gz', 'application/gzip'],
      ['zip', 'application/zip'],
    ] as const) {
      const archive = (await ctx.app.inject(`/skills/${name}/bundle?format=${format}`)).rawPayload;
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/skills',
        headers: { 'content-type': contentType, ...adminAuth },
        payload: archive,
      });
      expect(res.statusCode, format).toBe(200);
      expect(res.json(), format).toMatchObject({
        name,
        version: '1.0.0',
        digest: result.digest,
        created: false,
      });
    }
  });

  it('serves exact older versions', async () => {
    const { name } = await published755();
    await published(files({ 'SKILL.md': skillMd({ name, description: 'Bundle test v2.' }) }));
    const old = await ctx.app.inject(`/skills/${name}/bundle?version=1.0.0`);
    const extracted = await readServedArchive(old.rawPayload, 'tar.gz', DEFAULT_LIMITS);
    expect(extracted).toHaveLength(4);
    const latest = await ctx.app.inject(`/skills/${name}/bundle`);
    expect(await readServedArchive(latest.rawPayload, 'tar.gz', DEFAULT_LIMITS)).toHaveLength(1);
  });
});

describe('unknown skills', () => {
  it('answers 404 naming the closest existing name', async () => {
    await published(files({ 'SKILL.md': skillMd({ name: 'pdf-tools', description: 'Works with PDFs.' }) }));
    for (const path of ['', '/content', '/files/SKILL.md', '/bundle', '/versions']) {
      const res = await ctx.app.inject(`/skills/pdf-tool${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      const problem = res.json();
      expect(problem).toMatchObject({ status: 404, title: expect.any(String), type: expect.any(String) });
      expect(problem.detail).toContain("'pdf-tool'");
      expect(problem.detail).toContain('pdf-tools');
      expect(problem.suggestions[0]).toBe('pdf-tools');
    }
  });

  it('answers 404 with a pointer to the catalogue when nothing is close', async () => {
    const res = await ctx.app.inject(`/skills/${uniqueWord('zzqqxxyy')}`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.json().detail).toMatch(/GET \/skills|Did you mean/);
  });
});
