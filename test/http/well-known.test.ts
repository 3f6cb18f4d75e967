import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { readArchive } from '../../src/bundle/archive-read.js';
import { type BundleFile, DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, adminAuth, createTestApp, type TestApp, testConfig } from '../helpers/context.js';
import { sha256Digest } from '../helpers/hashing.js';

const INDEX = '/.well-known/agent-skills/index.json';
const SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

interface IndexEntry {
  name: string;
  description: string;
  type: string;
  url: string;
  digest: string;
}
interface DiscoveryIndex {
  $schema: string;
  skills: IndexEntry[];
}

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

async function published(bundle: BundleFile[], query?: string) {
  const res = await publish(ctx.app, bundle, { query });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { name: string; version: string; digest: string };
}

function skill(name: string, description = `Skill ${name} for the discovery index.`, extra = {}) {
  return files({ 'SKILL.md': skillMd({ name, description }), ...extra });
}

async function getIndex(app: FastifyInstance = ctx.app, headers: Record<string, string> = {}) {
  const res = await app.inject({ url: INDEX, headers });
  expect(res.statusCode, res.body).toBe(200);
  return { res, index: res.json() as DiscoveryIndex };
}

function entryOf(index: DiscoveryIndex, name: string): IndexEntry | undefined {
  return index.skills.find((entry) => entry.name === name);
}

/** Fetches an absolute index URL through app.inject (path and query; the origin is checked separately). */
async function fetchUrl(app: FastifyInstance, url: string) {
  const parsed = new URL(url);
  return app.inject({ url: `${parsed.pathname}${parsed.search}` });
}

const sha256 = sha256Digest;

describe('GET /.well-known/agent-skills/index.json', () => {
  it('lists every current skill as a 0.2.0 archive entry', async () => {
    const a = await published(skill(uniqueName('wk-a'), 'Alpha: does the first thing.'));
    const b = await published(skill(uniqueName('wk-b'), 'Beta: does the second thing.'));
    const { res, index } = await getIndex();
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(index).sort()).toEqual(['$schema', 'skills']);
    expect(index.$schema).toBe(SCHEMA);
    for (const [record, description] of [
      [a, 'Alpha: does the first thing.'],
      [b, 'Beta: does the second thing.'],
    ] as const) {
      const entry = entryOf(index, record.name);
      expect(entry).toBeDefined();
      expect(Object.keys(entry!).sort()).toEqual([
        'computedHash',
        'description',
        'digest',
        'name',
        'type',
        'url',
        'version',
      ]);
      expect(entry).toMatchObject({
        name: record.name,
        description,
        type: 'archive',
        version: record.version,
      });
      expect(entry!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      // Pinned to the exact version: immutable, so the digest next to it stays true.
      const url = new URL(entry!.url);
      expect(url.pathname).toBe(`/skills/${record.name}/bundle`);
      expect(url.searchParams.get('version')).toBe(record.version);
    }
    const names = index.skills.map((entry) => entry.name);
    expect(names).toEqual([...names].sort());
  });

  it('gives absolute URLs from the request origin, honouring proxies', async () => {
    const { name } = await published(skill(uniqueName('wk-origin')));
    const plain = await getIndex(ctx.app, { host: 'registry.test:8080' });
    expect(entryOf(plain.index, name)!.url).toMatch(
      new RegExp(`^http://registry\\.test:8080/skills/${name}/bundle\\?version=1\\.0\\.0&`),
    );
    const proxied = await getIndex(ctx.app, {
      host: 'internal:3000',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'skills.example.org',
    });
    expect(entryOf(proxied.index, name)!.url).toMatch(
      new RegExp(`^https://skills\\.example\\.org/skills/${name}/bundle\\?`),
    );
    // The body depends on the origin, so the validator does too.
    expect(plain.res.headers.etag).not.toBe(proxied.res.headers.etag);
  });

  it('uses SKILLREG_PUBLIC_URL when set; another replica serves the same digests', async () => {
    const { name } = await published(skill(uniqueName('wk-public')));
    const first = entryOf((await getIndex()).index, name)!;
    const replica = await buildApp({
      config: testConfig({ SKILLREG_PUBLIC_URL: 'https://skills.example.com/registry/' }),
      database: ctx.database,
      logger: false,
    });
    try {
      const { index } = await getIndex(replica, { host: 'ignored.internal' });
      const entry = entryOf(index, name)!;
      expect(entry.url).toMatch(
        new RegExp(`^https://skills\\.example\\.com/registry/skills/${name}/bundle\\?version=1\\.0\\.0&`),
      );
      expect(entry.digest).toBe(first.digest);
    } finally {
      await replica.close();
    }
  });

  it('each digest is the sha256 of exactly the bytes served at its url, files at the archive root', async () => {
    const bundle = files({
      'SKILL.md': skillMd({ name: uniqueName('wk-bytes'), description: 'Bytes must match.' }),
      'references/guide.md': '# Guide\n',
      'scripts/run.sh': '#!/bin/sh\necho ok\n',
      'assets/blob.bin': new Uint8Array([0, 1, 2, 255, 254, 0, 10, 13]),
    });
    bundle.find((file) => file.path === 'scripts/run.sh')!.mode = 0o755;
    const { name } = await published(bundle);
    const { index } = await getIndex();
    expect(index.skills.length).toBeGreaterThan(0);
    for (const entry of index.skills) {
      const res = await fetchUrl(ctx.app, entry.url);
      expect(res.statusCode, `${entry.url}: ${res.body}`).toBe(200);
      expect(sha256(res.rawPayload), entry.url).toBe(entry.digest);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const entry = entryOf(index, name)!;
    const res = await fetchUrl(ctx.app, entry.url);
    expect(res.headers['content-type']).toBe('application/zip');
    const extracted = await readArchive(res.rawPayload, 'zip', DEFAULT_LIMITS);
    const asMap = (list: BundleFile[]) =>
      Object.fromEntries(list.map((file) => [file.path, Buffer.from(file.bytes).toString('hex')]));
    expect(asMap(extracted)).toEqual(asMap(bundle));
  });

  it('lists the latest non-yanked version and leaves out skills with every version yanked', async () => {
    const kept = uniqueName('wk-kept');
    await published(skill(kept, 'Kept, version one.'), 'version=1.0.0');
    await published(skill(kept, 'Kept, version two.'), 'version=1.1.0');
    const gone = uniqueName('wk-gone');
    await published(skill(gone), 'version=2.0.0');
    const before = (await getIndex()).index;
    expect(entryOf(before, kept)!.description).toBe('Kept, version two.');
    expect(entryOf(before, gone)).toBeDefined();

    for (const [name, version] of [
      [kept, '1.1.0'],
      [gone, '2.0.0'],
    ]) {
      const yank = await ctx.app.inject({
        method: 'DELETE',
        url: `/skills/${name}/versions/${version}`,
        headers: adminAuth,
      });
      expect(yank.statusCode, yank.body).toBeLessThan(300);
    }
    const after = (await getIndex()).index;
    const entry = entryOf(after, kept)!;
    expect(entry.description).toBe('Kept, version one.');
    expect(new URL(entry.url).searchParams.get('version')).toBe('1.0.0');
    expect(entryOf(after, gone)).toBeUndefined();
    const res = await fetchUrl(ctx.app, entry.url);
    expect(sha256(res.rawPayload)).toBe(entry.digest);
  });

  it('answers 304 to its ETag, and shows a publish on the very next request', async () => {
    const first = await getIndex();
    const etag = first.res.headers.etag as string;
    expect(etag).toBeTruthy();
    expect(first.res.headers['cache-control']).toBe('public, no-cache');

    const again = await ctx.app.inject({ url: INDEX, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);

    const { name } = await published(skill(uniqueName('wk-fresh')));
    const next = await ctx.app.inject({ url: INDEX, headers: { 'if-none-match': etag } });
    expect(next.statusCode).toBe(200);
    expect(next.headers.etag).not.toBe(etag);
    expect(entryOf(next.json() as DiscoveryIndex, name)).toBeDefined();
  });

  it('builds no archive: every publish stored its own, and fetching a listed bundle reuses it', async () => {
    await published(skill(uniqueName('wk-once-a')));
    await published(skill(uniqueName('wk-once-b')));
    const repository = ctx.app.registry.archives;
    const archive = vi.spyOn(repository, 'archive');
    const buildArchives = vi.spyOn(repository, 'buildMissing');
    try {
      const { index } = await getIndex();
      expect(buildArchives).not.toHaveBeenCalled();
      expect(archive).not.toHaveBeenCalled();
      // Fetching a listed bundle reads the stored archive (archive() finds it) rather than building anew.
      const entry = index.skills[0]!;
      const res = await fetchUrl(ctx.app, entry.url);
      expect(sha256(res.rawPayload)).toBe(entry.digest);
    } finally {
      archive.mockRestore();
      buildArchives.mockRestore();
    }
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<string, { get?: { operationId?: string } }>;
    };
    expect(doc.paths[INDEX]?.get?.operationId).toBe('getAgentSkillsIndex');
  });

  it('requires a read token when SKILLREG_READ_AUTH is on', async () => {
    const privateApp = await buildApp({
      config: testConfig({ SKILLREG_READ_AUTH: 'true' }),
      database: ctx.database,
      logger: false,
    });
    try {
      const anonymous = await privateApp.inject(INDEX);
      expect(anonymous.statusCode).toBe(401);
      const authorised = await privateApp.inject({
        url: INDEX,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(authorised.statusCode).toBe(200);
    } finally {
      await privateApp.close();
    }
  });
});

describe('GET /skills/{name}/.well-known/agent-skills/index.json', () => {
  it('lists only that skill, with the same entry as the full index', async () => {
    const { name } = await published(skill(uniqueName('wk-scoped')));
    const res = await ctx.app.inject(`/skills/${name}/.well-known/agent-skills/index.json`);
    expect(res.statusCode, res.body).toBe(200);
    const scoped = res.json() as DiscoveryIndex;
    expect(scoped.$schema).toBe(SCHEMA);
    expect(scoped.skills).toHaveLength(1);
    expect(scoped.skills[0]).toEqual(entryOf((await getIndex()).index, name));
    const again = await ctx.app.inject({
      url: `/skills/${name}/.well-known/agent-skills/index.json`,
      headers: { 'if-none-match': res.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
  });

  it('answers <name>@<name> (the install source `npx skills find` prints) like <name>, and a 404 for another name', async () => {
    const { name } = await published(skill(uniqueName('wk-source')));
    const plain = (await ctx.app.inject(`/skills/${name}/.well-known/agent-skills/index.json`)).json();
    const sourced = await ctx.app.inject(`/skills/${name}@${name}/.well-known/agent-skills/index.json`);
    expect(sourced.statusCode, sourced.body).toBe(200);
    expect(sourced.json()).toEqual(plain);
    const other = await ctx.app.inject(`/skills/${name}@someone-else/.well-known/agent-skills/index.json`);
    expect(other.statusCode).toBe(404);
    expect(other.json().detail).toContain('each source holds one skill');
  });

  it('GET /api/search answers in the skills CLI shape, each source the per-skill install URL', async () => {
    const { name } = await published(skill(uniqueName('wk-api'), 'Converts invoices into ledger entries.'));
    const res = await ctx.app.inject({
      url: '/api/search?q=convert%20invoices%20to%20ledger%20entries&limit=10',
      headers: { host: 'registry.test' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [first] = res.json().skills;
    expect(first).toEqual({
      id: name,
      name,
      source: `http://registry.test/skills/${name}`,
      description: 'Converts invoices into ledger entries.',
    });
    expect((await ctx.app.inject('/api/search')).statusCode).toBe(400);
  });

  it('is a 404 problem for an unknown skill', async () => {
    const res = await ctx.app.inject('/skills/no-such-skill-here/.well-known/agent-skills/index.json');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
