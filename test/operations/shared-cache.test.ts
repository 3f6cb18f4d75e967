import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, putView } from '../helpers/context.js';
import { listening } from '../helpers/http.js';
import { type LiveApp, liveApp, publishTarball } from '../helpers/live-app.js';
import { hasNginx, type Nginx, startNginx } from '../helpers/nginx.js';
import { until } from '../helpers/polling.js';
import { type Replicas, startReplicas } from '../helpers/replicas.js';

// deploy/nginx.conf in front of a replica, run with Debian's nginx: exact-version reads come from the
// cache, conditional GETs answer 304 while nothing changed, and every other read is revalidated with
// the registry on each request, so a write is seen on the very next one (the visibility rule of
// CONTRACT.md's "Past one machine" adds nothing for the cache to hide). What reaches the registry is
// seen on its own HTTP server, in front of everything it answers (its response cache included).

const run = promisify(execFile);

/** One request as the registry saw it, and the status it answered. */
interface OriginRequest {
  method: string;
  url: string;
  ifNoneMatch: string | undefined;
  authorization: boolean;
  /** Once the head is sent (the response cache in front of Fastify may have sent it already). */
  readonly status: number | undefined;
}

/** Records every request reaching a replica's HTTP server. */
function recordOrigin(server: Server): OriginRequest[] {
  const seen: OriginRequest[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      ifNoneMatch: req.headers['if-none-match'],
      authorization: req.headers.authorization !== undefined,
      get status() {
        return res.headersSent ? res.statusCode : undefined;
      },
    });
  });
  return seen;
}

interface Got {
  status: number;
  cache: string | null;
  etag: string | null;
  headers: Headers;
  body: string;
}

async function get(base: string, url: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(`${base}${url}`, { headers });
  return {
    status: res.status,
    cache: res.headers.get('x-cache'),
    etag: res.headers.get('etag'),
    headers: res.headers,
    body: await res.text(),
  };
}

function bundle(name: string, label: string) {
  return files({
    'SKILL.md': skillMd({ name, description: `Cached through nginx, ${label}.`, body: `# ${label}\n` }),
    'references/api.md': `# API of ${label}\n`,
  });
}

/** Reads whose answer a write may change: revalidated on every request, never served stale. */
function mutableReads(name: string): string[] {
  return [
    '/skills',
    `/skills?q=${name}`,
    `/skills/${name}`,
    `/skills/${name}/content`,
    `/skills/${name}/content?format=json`,
    `/skills/${name}/files/references/api.md`,
    `/skills/${name}/bundle`,
    `/skills/${name}/versions`,
    '/prompt',
    '/prompt?format=json',
    '/tools?provider=anthropic',
    '/.well-known/agent-skills/index.json',
    '/marketplace.json',
  ];
}

describe.skipIf(!hasNginx)('deploy/nginx.conf in front of the registry', () => {
  let ctx: LiveApp;
  let nginx: Nginx;
  let origin: OriginRequest[];
  const asked = (url: string) => origin.filter((request) => request.method === 'GET' && request.url === url);
  const via = (url: string, headers?: Record<string, string>) => get(nginx.url, url, headers);

  beforeAll(async () => {
    ctx = await liveApp('skillreg-shared-cache-');
    origin = recordOrigin(ctx.app.server);
    nginx = await startNginx(ctx.url);
  });
  afterAll(async () => {
    await nginx?.stop();
    await ctx?.close();
  });

  it('serves exact-version reads from the cache: the registry is asked once', async () => {
    const name = uniqueName('nginx-exact');
    await publishTarball(ctx.url, bundle(name, 'one'));
    for (const url of [
      `/skills/${name}/content?version=1.0.0`,
      `/skills/${name}/content?version=1.0.0&format=json`,
      `/skills/${name}/files/references/api.md?version=1.0.0`,
      `/skills/${name}/bundle?version=1.0.0`,
      `/skills/${name}/bundle?version=1.0.0&format=zip`,
    ]) {
      const first = await via(url);
      expect(first.status, `${url}: ${first.body}`).toBe(200);
      expect(first.cache, url).toBe('MISS');
      expect(first.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      const second = await via(url);
      expect([second.status, second.cache, second.etag], url).toEqual([200, 'HIT', first.etag]);
      expect(second.body, url).toBe(first.body);
      const conditional = await via(url, { 'if-none-match': first.etag! });
      expect([conditional.status, conditional.cache, conditional.body], url).toEqual([304, 'HIT', '']);
      expect(asked(url), url).toHaveLength(1);
    }
  });

  it('answers conditional GETs 304 while nothing changed, asking the registry each time', async () => {
    const name = uniqueName('nginx-poll');
    await publishTarball(ctx.url, bundle(name, 'one'));
    const view = uniqueName('nginx-view');
    expect((await putView(ctx.app, view, ['default'])).statusCode).toBe(201);
    for (const url of [...mutableReads(name), `/views/${view}/skills`, `/views/${view}/prompt`]) {
      const first = await via(url);
      expect(first.status, `${url}: ${first.body}`).toBe(200);
      expect(first.headers.get('cache-control'), url).toBe('public, no-cache');
      // nginx's own header is for nginx: clients never see it.
      expect(first.headers.get('x-accel-expires'), url).toBeNull();
      expect(first.etag, url).toBeTruthy();
      const conditional = await via(url, { 'if-none-match': first.etag! });
      expect([conditional.status, conditional.cache, conditional.body], url).toEqual([
        304,
        'REVALIDATED',
        '',
      ]);
      const again = await via(url);
      expect([again.status, again.cache, again.etag, again.body], url).toEqual([
        200,
        'REVALIDATED',
        first.etag,
        first.body,
      ]);
      // Every request reached the registry; after the first, as a revalidation it answered 304.
      const seen = asked(url);
      expect(
        seen.map((request) => [request.ifNoneMatch, request.status]),
        url,
      ).toEqual([
        [undefined, 200],
        [first.etag, 304],
        [first.etag, 304],
      ]);
    }
  });

  it('shows a publish, a tag move and a yank on the very next request through the cache', async () => {
    const name = uniqueName('nginx-visible');
    await publishTarball(ctx.url, bundle(name, 'one'));
    const refsUrl = `/git/skills/${name}.git/info/refs?service=git-upload-pack`;
    const before = new Map<string, Got>();
    for (const url of mutableReads(name)) {
      const first = await via(url);
      expect(first.status, url).toBe(200);
      // Held by the cache and validated once more, so a stale copy would be at hand to serve.
      expect((await via(url, { 'if-none-match': first.etag! })).status, url).toBe(304);
      before.set(url, first);
    }
    expect((await via(refsUrl)).body).toContain('refs/tags/v1.0.0');

    // The write goes through the cache too; the next reads follow at once, with no wait.
    await publishTarball(nginx.url, bundle(name, 'two'));
    for (const url of mutableReads(name)) {
      const old = before.get(url)!;
      const next = await via(url, { 'if-none-match': old.etag! });
      expect(next.status, `${url} after the publish`).toBe(200);
      expect(next.etag, url).not.toBe(old.etag);
    }
    expect((await via(`/skills/${name}/content`)).body).toContain('# two');
    expect((await via(`/skills/${name}`)).body).toContain('"version":"1.0.1"');
    const marketplace = JSON.parse((await via('/marketplace.json')).body) as {
      plugins: { name: string; version: string }[];
    };
    expect(marketplace.plugins.find((plugin) => plugin.name === name)?.version).toBe('1.0.1');
    // Git's ref advertisements are never stored: git says no-cache and sends no validator.
    const refs = await via(refsUrl);
    expect(refs.body).toContain('refs/tags/v1.0.1');
    expect(refs.cache).toBe('MISS');

    const tagged = `/skills/${name}/content?tag=stable`;
    const moveTag = (version: string) =>
      fetch(`${nginx.url}/skills/${name}/tags/stable`, {
        method: 'PUT',
        headers: { ...adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ version }),
      });
    expect((await moveTag('1.0.0')).status).toBe(200);
    const stable = await via(tagged);
    expect(stable.body).toContain('# one');
    expect((await via(tagged, { 'if-none-match': stable.etag! })).status).toBe(304);
    expect((await moveTag('1.0.1')).status).toBe(200);
    const moved = await via(tagged, { 'if-none-match': stable.etag! });
    expect([moved.status, moved.body]).toEqual([200, '# two\n']);

    const latest = await via(`/skills/${name}/content`);
    expect(latest.body).toContain('# two');
    const yank = await fetch(`${nginx.url}/skills/${name}/versions/1.0.1`, {
      method: 'DELETE',
      headers: adminAuth,
    });
    expect(yank.status).toBe(200);
    const fallen = await via(`/skills/${name}/content`, { 'if-none-match': latest.etag! });
    expect([fallen.status, fallen.body]).toEqual([200, '# one\n']);
    // A yanked version stays fetchable by exact version, from the cache as before.
    const exact = `/skills/${name}/content?version=1.0.1`;
    expect((await via(exact)).status).toBe(200);
    expect(await via(exact)).toMatchObject({ status: 200, cache: 'HIT', body: '# two\n' });
  });

  it("never stores a request's answer made with credentials, and passes its If-None-Match on", async () => {
    const name = uniqueName('nginx-token');
    await publishTarball(ctx.url, bundle(name, 'one'));
    const url = `/skills/${name}/content?version=1.0.0`;
    const withToken = await via(url, adminAuth);
    expect([withToken.status, withToken.cache]).toEqual([200, 'BYPASS']);
    // Not stored: the first request without credentials fills the cache itself.
    expect((await via(url)).cache).toBe('MISS');
    const conditional = await via(url, { ...adminAuth, 'if-none-match': withToken.etag! });
    expect([conditional.status, conditional.cache]).toEqual([304, 'BYPASS']);
    const polled = await via(`/skills/${name}/content`, adminAuth);
    expect(
      (await via(`/skills/${name}/content`, { ...adminAuth, 'if-none-match': polled.etag! })).status,
    ).toBe(304);
    // The registry answered those polls itself, from the client's own If-None-Match.
    expect(
      origin
        .filter((request) => request.authorization && request.ifNoneMatch && request.url.includes(name))
        .map((request) => request.status),
    ).toEqual([304, 304]);
  });

  it('passes git clones and MCP through, streamed', async () => {
    const name = uniqueName('nginx-git');
    await publishTarball(ctx.url, bundle(name, 'cloned'));
    const target = path.join(ctx.work, name);
    await run('git', ['clone', '--quiet', `${nginx.url}/git/skills/${name}.git`, target], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    });
    expect(await readFile(path.join(target, 'SKILL.md'), 'utf8')).toContain('# cloned');
    expect(
      origin.some((request) => request.method === 'POST' && request.url.endsWith('/git-upload-pack')),
    ).toBe(true);

    const mcp = await fetch(`${nginx.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'nginx', version: '1' },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    expect(await mcp.text()).toContain('"serverInfo"');
  });

  it('keeps /metrics off the public entry point', async () => {
    expect((await via('/metrics')).status).toBe(404);
  });
});

describe.skipIf(!hasNginx)('deploy/nginx.conf with SKILLREG_READ_AUTH=true', () => {
  let ctx: LiveApp;
  let nginx: Nginx;
  const via = (url: string, headers?: Record<string, string>) => get(nginx.url, url, headers);
  const team = uniqueName('nginx-team');
  const other = uniqueName('nginx-other');
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    ctx = await liveApp('skillreg-shared-cache-auth-', { SKILLREG_READ_AUTH: 'true' });
    nginx = await startNginx(ctx.url);
    for (const [who, namespace] of [
      ['team', team],
      ['other', other],
    ] as const) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: adminAuth,
        payload: { name: who, scopes: ['read'], namespaces: [namespace] },
      });
      expect(res.statusCode, res.body).toBe(201);
      tokens[who] = `Bearer ${(res.json() as { secret: string }).secret}`;
    }
  });
  afterAll(async () => {
    await nginx?.stop();
    await ctx?.close();
  });

  it("never gives one token holder's answer to another or to anonymous clients", async () => {
    const name = uniqueName('nginx-private');
    await publishTarball(ctx.url, bundle(name, 'private'), `?namespace=${team}`);
    for (const url of [
      `/namespaces/${team}/skills/${name}/content?version=1.0.0`,
      `/namespaces/${team}/skills/${name}/content`,
      `/namespaces/${team}/skills`,
    ]) {
      const reader = await via(url, { authorization: tokens.team! });
      expect([reader.status, reader.cache], url).toEqual([200, 'BYPASS']);
      expect(reader.headers.get('cache-control'), url).toMatch(/^private\b/);
      expect((await via(url)).status, url).toBe(401);
      expect((await via(url, { authorization: tokens.other! })).status, url).toBe(403);
      // The holder's own polls still end in 304s, answered by the registry.
      const conditional = await via(url, { authorization: tokens.team!, 'if-none-match': reader.etag! });
      expect([conditional.status, conditional.cache], url).toEqual([304, 'BYPASS']);
      expect((await via(url)).status, url).toBe(401);
    }
  });
});

describe.skipIf(!hasNginx || !inject('postgresUrl'))('deploy/nginx.conf in front of two replicas', () => {
  let replicas: Replicas;
  let urls: string[];
  let nginx: Nginx;
  let seen: OriginRequest[][];
  const via = (url: string) => get(nginx.url, url);
  /** `count` requests in a row: nginx takes the replicas in turn, so each answers some of them. */
  const bodies = async (url: string, count = 4) => {
    const seen: string[] = [];
    for (let i = 0; i < count; i++) seen.push((await via(url)).body);
    return seen;
  };

  beforeAll(async () => {
    replicas = await startReplicas(2);
    urls = await Promise.all(replicas.apps.map((app) => listening(app)));
    seen = replicas.apps.map((app) => recordOrigin(app.server));
    nginx = await startNginx(urls);
  });
  afterAll(async () => {
    await nginx?.stop();
    await replicas?.close();
  });

  it('serves a write through the cache from every replica within 1 s, and never the old answer after', async () => {
    const name = uniqueName('nginx-replicas');
    const url = `/skills/${name}/content`;
    await publishTarball(urls[0]!, bundle(name, 'one'));
    await until(async () => (await bodies(url)).every((body) => body === '# one\n'), 1_000);
    await publishTarball(urls[0]!, bundle(name, 'two'));
    await until(async () => (await bodies(url)).every((body) => body === '# two\n'), 1_000);
    expect(new Set(await bodies(url, 10))).toEqual(new Set(['# two\n']));
    // Both replicas answered reads through the cache, each one revalidating.
    for (const replica of seen)
      expect(replica.filter((request) => request.url === url).length).toBeGreaterThan(3);
  });
});
