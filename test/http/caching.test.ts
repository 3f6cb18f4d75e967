import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp, testConfig } from '../helpers/context.js';
import { fetchVia, listening, type Transport } from '../helpers/http.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Set by the suite running: every rule below must hold through app.inject and over a socket. */
let transport: Transport = 'inject';

function get(url: string, ifNoneMatch?: string) {
  return fetchVia(transport, ctx.app, url, ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {});
}

/** Cache-Control that makes caches ask again before reusing a stored answer. */
function expectRevalidating(cacheControl: string | undefined) {
  expect(cacheControl).toBeDefined();
  expect(cacheControl).not.toContain('immutable');
  expect(cacheControl).toMatch(/no-cache|max-age=0|must-revalidate/);
}

async function etagOf(url: string): Promise<string> {
  const res = await get(url);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  const etag = res.headers.etag;
  expect(typeof etag).toBe('string');
  return etag as string;
}

async function expect304(url: string, ifNoneMatch: string) {
  const res = await get(url, ifNoneMatch);
  expect(res.statusCode, `${url} with If-None-Match ${ifNoneMatch}`).toBe(304);
  expect(res.rawPayload).toHaveLength(0);
  return res;
}

async function skillWithFiles(label: string) {
  const name = uniqueName(label);
  const res = await publish(
    ctx.app,
    files({
      'SKILL.md': skillMd({ name, description: `Caching ${label}.` }),
      'references/api.md': '# API\n',
      'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    }),
  );
  expect(res.statusCode).toBe(201);
  return { name, digest: res.json().digest as string };
}

function readUrls(name: string) {
  return [
    '/skills',
    '/skills?limit=5',
    `/skills?q=${name}`,
    `/skills/${name}`,
    `/skills/${name}/content`,
    `/skills/${name}/content?format=json`,
    `/skills/${name}/content?format=xml`,
    `/skills/${name}/files/SKILL.md`,
    `/skills/${name}/files/references/api.md`,
    `/skills/${name}/files/assets/logo.png`,
    `/skills/${name}/bundle`,
    `/skills/${name}/bundle?format=zip`,
    `/skills/${name}/versions`,
  ];
}

// Through app.inject the routes answer; over HTTP the response cache in front of Fastify answers
// repeated reads, and must follow exactly the same rules.
describe.each(['inject', 'http'] as const)('caching via %s', (via) => {
  beforeAll(() => {
    transport = via;
  });
  afterAll(() => {
    const { hits, notModified } = ctx.app.responseCache.counters;
    // Over HTTP the rules above were checked against the response cache too, not only the routes.
    if (via === 'http') expect(hits + notModified).toBeGreaterThan(0);
  });

  describe('ETag and If-None-Match', () => {
    it('every GET with a body has an ETag; sending it back answers 304 with no body', async () => {
      const { name } = await skillWithFiles('etag');
      for (const url of [
        ...readUrls(name),
        ...readUrls(name).map((u) => `${u}${u.includes('?') ? '&' : '?'}`),
      ]) {
        const etag = await etagOf(url);
        expect(etag, url).toMatch(/^(W\/)?"[^"]+"$/);
        const res = await expect304(url, etag);
        expect(res.headers.etag, url).toBe(etag);
        expect(res.headers['cache-control'], url).toBeDefined();
      }
    });

    it('exact-version reads answer 304 too', async () => {
      const { name } = await skillWithFiles('etag-exact');
      for (const path of ['', '/content', '/content?format=json', '/files/SKILL.md', '/bundle']) {
        const url = `/skills/${name}${path}${path.includes('?') ? '&' : '?'}version=1.0.0`;
        await expect304(url, await etagOf(url));
      }
    });

    it('matches the weak form W/"..." and any member of a list; ignores non-matching tags', async () => {
      const { name } = await skillWithFiles('etag-forms');
      for (const url of [
        `/skills/${name}/content`,
        `/skills/${name}/bundle`,
        '/skills',
        `/skills/${name}/versions`,
      ]) {
        const etag = await etagOf(url);
        const opaque = etag.replace(/^W\//, '');
        await expect304(url, `W/${opaque}`);
        await expect304(url, opaque);
        await expect304(url, `"a", ${etag}`);
        await expect304(url, `"a","b",${etag}`);
        await expect304(url, `"a", W/${opaque}, "b"`);
        await expect304(url, '*');
        for (const other of ['"a", "b"', '"nope"', `W/"x${opaque.slice(1)}`, `${opaque.slice(0, -2)}"`]) {
          const res = await get(url, other);
          expect(res.statusCode, `${url} with ${other}`).toBe(200);
          expect(res.rawPayload.length).toBeGreaterThan(0);
        }
      }
    });

    it('gives each representation its own ETag', async () => {
      const { name } = await skillWithFiles('etag-formats');
      const contentTags = await Promise.all(
        ['', '?format=json', '?format=xml'].map((q) => etagOf(`/skills/${name}/content${q}`)),
      );
      expect(new Set(contentTags).size).toBe(3);
      const bundleTags = await Promise.all(
        ['', '?format=zip'].map((q) => etagOf(`/skills/${name}/bundle${q}`)),
      );
      expect(new Set(bundleTags).size).toBe(2);
      const fileTags = await Promise.all(
        ['SKILL.md', 'references/api.md'].map((path) => etagOf(`/skills/${name}/files/${path}`)),
      );
      expect(new Set(fileTags).size).toBe(2);
      // An ETag of one representation never validates another.
      expect((await get(`/skills/${name}/content?format=json`, contentTags[0])).statusCode).toBe(200);
      expect((await get(`/skills/${name}/bundle?format=zip`, bundleTags[0])).statusCode).toBe(200);
      // Catalogue pages differ by their query.
      const pageTags = await Promise.all(['limit=1', 'limit=2', 'q=x'].map((q) => etagOf(`/skills?${q}`)));
      expect(new Set(pageTags).size).toBe(3);
    });

    it('uses strong ETags from the digest for content, files and bundles', async () => {
      const { name, digest } = await skillWithFiles('etag-strong');
      const hex = digest.replace('sha256:', '');
      for (const url of [`/skills/${name}/content`, `/skills/${name}/bundle`]) {
        const etag = await etagOf(url);
        expect(etag.startsWith('W/')).toBe(false);
        expect(etag).toContain(hex);
      }
      expect((await etagOf(`/skills/${name}/files/SKILL.md`)).startsWith('W/')).toBe(false);
    });
  });

  describe('Cache-Control', () => {
    it('is immutable for exact-version reads', async () => {
      const { name } = await skillWithFiles('cc-exact');
      for (const path of [
        '/content?version=1.0.0',
        '/content?version=1.0.0&format=json',
        '/content?version=1.0.0&format=xml',
        '/files/SKILL.md?version=1.0.0',
        '/files/assets/logo.png?version=1.0.0',
        '/bundle?version=1.0.0',
        '/bundle?version=1.0.0&format=zip',
        '?version=1.0.0',
      ]) {
        const res = await get(`/skills/${name}${path}`);
        expect(res.statusCode, path).toBe(200);
        expect(res.headers['cache-control'], path).toBe(IMMUTABLE);
      }
    });

    it('revalidates for latest and tag reads and for listings', async () => {
      const { name } = await skillWithFiles('cc-latest');
      const urls = [
        ...readUrls(name),
        `/skills/${name}?tag=latest`,
        `/skills/${name}/content?tag=latest`,
        `/skills/${name}/files/SKILL.md?tag=latest`,
        `/skills/${name}/bundle?tag=latest`,
      ];
      for (const url of urls) {
        const res = await get(url);
        expect(res.statusCode, url).toBe(200);
        expectRevalidating(res.headers['cache-control'] as string | undefined);
      }
    });
  });

  describe('writes are visible on the very next request', () => {
    const watched = (name: string) => [
      '/skills',
      '/skills?limit=500',
      `/skills/${name}/versions`,
      `/skills/${name}`,
    ];

    async function snapshot(name: string): Promise<Map<string, string>> {
      const tags = new Map<string, string>();
      for (const url of watched(name)) tags.set(url, await etagOf(url));
      return tags;
    }

    async function expectAllChanged(before: Map<string, string>) {
      for (const [url, old] of before) {
        const res = await get(url, old);
        expect(res.statusCode, `${url} still answers 304 to its old ETag`).toBe(200);
        expect(res.headers.etag, url).not.toBe(old);
        await expect304(url, res.headers.etag as string);
      }
    }

    it('after a publish', async () => {
      const { name } = await skillWithFiles('fresh-publish');
      const before = await snapshot(name);
      const res = await publish(
        ctx.app,
        files({ 'SKILL.md': skillMd({ name, description: 'Second version.' }) }),
      );
      expect(res.statusCode).toBe(201);
      await expectAllChanged(before);
      expect((await get(`/skills/${name}`)).json().version).toBe('1.0.1');
    });

    it('after a tag move', async () => {
      const { name } = await skillWithFiles('fresh-tag');
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Second version.' }) }));
      const before = await snapshot(name);
      const stableBefore = await get(`/skills?tag=stable&limit=500`);
      const contentBefore = await etagOf(`/skills/${name}/content`);
      const moved = await ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/latest`,
        headers: adminAuth,
        payload: { version: '1.0.0' },
      });
      expect(moved.statusCode).toBe(200);
      await expectAllChanged(before);
      // The content of latest is now another digest: its ETag no longer validates.
      const content = await get(`/skills/${name}/content`, contentBefore);
      expect(content.statusCode).toBe(200);
      expect(content.body).toContain(`# ${name}`);
      // A tag that did not exist before shows up in the filtered catalogue straight away.
      await ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/stable`,
        headers: adminAuth,
        payload: { version: '1.0.1' },
      });
      const stable = await get(`/skills?tag=stable&limit=500`, stableBefore.headers.etag as string);
      expect(stable.statusCode).toBe(200);
      expect(stable.json().items.map((item: { name: string }) => item.name)).toContain(name);
    });

    it('after a yank', async () => {
      const { name } = await skillWithFiles('fresh-yank');
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Second version.' }) }));
      const before = await snapshot(name);
      const exactBefore = await etagOf(`/skills/${name}?version=1.0.1`);
      const yanked = await ctx.app.inject({
        method: 'DELETE',
        url: `/skills/${name}/versions/1.0.1`,
        headers: adminAuth,
      });
      expect(yanked.statusCode).toBe(200);
      await expectAllChanged(before);
      const exact = await get(`/skills/${name}?version=1.0.1`, exactBefore);
      expect(exact.statusCode).toBe(200);
      expect(exact.json().yanked).toBe(true);
    });

    it('after an identical republish that moves a tag', async () => {
      const { name } = await skillWithFiles('fresh-retag');
      const v1 = files({
        'SKILL.md': skillMd({ name, description: 'Caching fresh-retag.' }),
        'references/api.md': '# API\n',
        'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      });
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Second version.' }) }));
      const before = await snapshot(name);
      const stableUrl = '/skills?tag=stable&limit=500';
      const stableBefore = await etagOf(stableUrl);
      const res = await publish(ctx.app, v1, { query: 'tag=stable' });
      expect(res.json()).toMatchObject({ version: '1.0.0', created: false });
      const stable = await get(stableUrl, stableBefore);
      expect(stable.statusCode).toBe(200);
      expect(stable.json().items.map((item: { name: string }) => item.name)).toContain(name);
      await expectAllChanged(before);
      expect((await get(`/skills/${name}`)).json().distTags).toEqual({ latest: '1.0.1', stable: '1.0.0' });
    });

    it('not after a refused or idempotent write', async () => {
      const { name } = await skillWithFiles('fresh-noop');
      const before = await snapshot(name);
      const same = await publish(
        ctx.app,
        files({
          'SKILL.md': skillMd({ name, description: 'Caching fresh-noop.' }),
          'references/api.md': '# API\n',
          'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
        }),
      );
      expect(same.statusCode).toBe(200);
      const refused = await publish(
        ctx.app,
        files({ 'SKILL.md': skillMd({ name, description: 'x'.repeat(2000) }) }),
      );
      expect(refused.statusCode).toBe(422);
      for (const [url, etag] of before) await expect304(url, etag);
    });
  });

  describe('representations that share a digest', () => {
    it('the same files republished under a new version do not validate the old version-bearing answers', async () => {
      const name = uniqueName('same-digest');
      const bundle = files({ 'SKILL.md': skillMd({ name, description: 'Re-released unchanged.' }) });
      expect((await publish(ctx.app, bundle, { query: 'version=1.0.0' })).statusCode).toBe(201);
      const oldJson = await etagOf(`/skills/${name}/content?format=json`);
      const oldMeta = await etagOf(`/skills/${name}`);
      const rerelease = await publish(ctx.app, bundle, { query: 'version=2.0.0' });
      expect(rerelease.statusCode).toBe(201);

      const json = await get(`/skills/${name}/content?format=json`, oldJson);
      expect(json.statusCode).toBe(200);
      expect(json.json().version).toBe('2.0.0');
      expect((await get(`/skills/${name}`, oldMeta)).statusCode).toBe(200);
      // The markdown body is byte-identical, so its ETag may stay.
      expect((await get(`/skills/${name}/content`)).body).toContain(`# ${name}`);
    });

    it('exact-version metadata changes its ETag when its versions or tags change', async () => {
      const name = uniqueName('meta-exact');
      expect(
        (await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'One.' }) }))).statusCode,
      ).toBe(201);
      const before = await etagOf(`/skills/${name}?version=1.0.0`);
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Two.' }) }));
      const res = await get(`/skills/${name}?version=1.0.0`, before);
      expect(res.statusCode).toBe(200);
      expect(res.json().versions).toHaveLength(2);
      expect(res.json().distTags).toEqual({ latest: '1.0.1' });
    });
  });

  describe('replicas', () => {
    it('a write through one replica changes the ETags another replica answers with', async () => {
      // A second instance of the service on the same database, as another replica would be.
      const replica = await buildApp({ config: testConfig(), database: ctx.database, logger: false });
      try {
        const { name } = await skillWithFiles('replica');
        const urls = ['/skills', `/skills/${name}/versions`, `/skills/${name}`, `/skills/${name}/content`];
        const before = new Map<string, string>();
        for (const url of urls) {
          const res = await replica.inject(url);
          expect(res.statusCode).toBe(200);
          before.set(url, res.headers.etag as string);
        }
        const res = await publish(
          ctx.app,
          files({ 'SKILL.md': skillMd({ name, description: 'From replica A.' }) }),
        );
        expect(res.statusCode).toBe(201);
        for (const [url, etag] of before) {
          const answer = await replica.inject({ url, headers: { 'if-none-match': etag } });
          expect(answer.statusCode, url).toBe(200);
        }
        expect((await replica.inject(`/skills/${name}`)).json().version).toBe('1.0.1');
      } finally {
        await replica.close();
      }
    });
  });
});

/** Status and headers in the order they were sent (fetch's Headers sorts them). */
function rawHead(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; names: string[]; values: string[] }>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        const raw = res.rawHeaders;
        resolve({
          status: res.statusCode ?? 0,
          names: raw.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase()),
          values: raw.filter((_, i) => i % 2 === 1),
        });
      })
      .on('error', reject);
  });
}

// nginx's proxy_cache stores a `no-cache` answer only when X-Accel-Expires says so, and nginx 1.22
// reads that header only ahead of Cache-Control (src/http/caching.ts, deploy/nginx.conf).
describe('the header nginx needs to revalidate', () => {
  it('goes ahead of Cache-Control on revalidated answers, 200 and 304, however answered', async () => {
    const { name } = await skillWithFiles('nginx-order');
    const base = await listening(ctx.app);
    for (const url of [`/skills/${name}/content`, '/skills', '/prompt', `/skills/${name}/bundle`]) {
      // The second round comes from the response cache in front of Fastify.
      for (const round of [1, 2]) {
        const ok = await rawHead(`${base}${url}`);
        expect(ok.status, url).toBe(200);
        const etag = ok.values[ok.names.indexOf('etag')]!;
        const notModified = await rawHead(`${base}${url}`, { 'if-none-match': etag });
        expect(notModified.status, url).toBe(304);
        for (const head of [ok, notModified]) {
          const at = head.names.indexOf('x-accel-expires');
          expect(head.values[at], `${url} (${round})`).toBe('@1');
          expect(at, `${url} (${round})`).toBeLessThan(head.names.indexOf('cache-control'));
        }
      }
    }
  });

  it('is never sent with an immutable answer nor with one for a token holder', async () => {
    const { name } = await skillWithFiles('nginx-none');
    const exact = await get(`/skills/${name}/content?version=1.0.0`);
    expect(exact.headers['cache-control']).toBe(IMMUTABLE);
    expect(exact.headers['x-accel-expires']).toBeUndefined();
    const guarded = await buildApp({
      config: testConfig({ SKILLREG_READ_AUTH: 'true' }),
      database: ctx.database,
      logger: false,
    });
    try {
      for (const url of [`/skills/${name}/content`, '/skills', `/skills/${name}/content?version=1.0.0`]) {
        const res = await guarded.inject({ url, headers: adminAuth });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['cache-control'], url).toMatch(/^private\b/);
        expect(res.headers['x-accel-expires'], url).toBeUndefined();
      }
    } finally {
      await guarded.close();
    }
  });
});
