import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServedArchive } from '../../src/bundle/archive-read.js';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import {
  parseRetryAfter,
  RegistryError,
  type RetryEvent,
  type RetryOptions,
  SkillRegistryClient,
} from '../../src/client/index.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { type FlakyProxy, startFlakyProxy } from '../helpers/flaky-proxy.js';
import { listening } from '../helpers/http.js';

// The client retries what the registry refuses for now (429, 503) and connections that fail, honouring
// Retry-After, with a bounded number of attempts and a bounded total wait; everything else fails at once.
// Real servers throughout: the service listening on a port, a node:http proxy in front of it that
// answers scripted refusals, and the service's own write rate limit.

let ctx: TestApp;
let upstream: string;
let proxy: FlakyProxy;

beforeAll(async () => {
  ctx = await createTestApp();
  upstream = await listening(ctx.app);
  proxy = await startFlakyProxy(upstream);
});
afterAll(async () => {
  await proxy?.close();
  await ctx?.close();
});

/** A client of the proxy that records each retry; small backoffs keep the tests quick. */
function clientOf(url: string, retry: RetryOptions = {}) {
  const events: RetryEvent[] = [];
  const client = new SkillRegistryClient({
    url,
    token: ADMIN_TOKEN,
    retry: { baseDelayMs: 20, ...retry, onRetry: (event) => events.push(event) },
  });
  return { client, events };
}

const skillBundle = (name: string, body = 'Retried.\n') =>
  files({
    'SKILL.md': skillMd({ name, description: 'A skill published through a flaky proxy.', body }),
    'references/guide.md': '# Guide\n',
  });

const posts = () => proxy.seen.filter((request) => request.method === 'POST');

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates; anything else is ignored', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0); // in the past: at once
    for (const junk of [null, '', '-1', '1.5', 'soon', 'in 5 minutes'])
      expect(parseRetryAfter(junk, now)).toBeUndefined();
  });
});

describe('retrying against a real listening server', () => {
  it('a publish refused twice with 429 + Retry-After waits as asked, resends the same bytes and is created', async () => {
    const name = uniqueName('retry-429');
    const bytes = await writeTarGz(skillBundle(name));
    const { client, events } = clientOf(proxy.url);
    proxy.seen.length = 0;
    proxy.script(
      [
        { status: 429, headers: { 'retry-after': '1' } },
        { status: 429, headers: { 'retry-after': '1' } },
      ],
      (method) => method === 'POST',
    );
    const started = Date.now();
    const result = await client.publish({ type: 'tar.gz', bytes });
    const elapsed = Date.now() - started;

    expect(result).toMatchObject({ name, version: '1.0.0', created: true });
    expect(posts().map((request) => request.outcome)).toEqual([429, 429, 'proxied']);
    // Every attempt carried the whole archive, byte for byte.
    for (const request of posts()) expect(request.body.equals(Buffer.from(bytes))).toBe(true);
    expect(events).toHaveLength(2);
    for (const [index, event] of events.entries()) {
      expect(event).toMatchObject({
        method: 'POST',
        path: '/skills',
        attempt: index + 1,
        attempts: 4,
        status: 429,
        retryAfter: true,
      });
      expect(event.delayMs).toBeGreaterThanOrEqual(1000);
      expect(event.delayMs).toBeLessThan(1250);
    }
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    // The registry holds exactly what was sent, once.
    const versions = (await new SkillRegistryClient({ url: upstream }).listVersions(name)).value;
    expect(versions.map((version) => version.version)).toEqual(['1.0.0']);
  });

  it('a multipart publish refused with 503 and an HTTP-date Retry-After is rebuilt and sent again whole', async () => {
    const name = uniqueName('retry-503');
    const bundle = skillBundle(name);
    const { client, events } = clientOf(proxy.url);
    proxy.seen.length = 0;
    proxy.script([{ status: 503, headers: { 'retry-after': new Date(Date.now() + 1000).toUTCString() } }]);
    const result = await client.publish({
      type: 'files',
      files: bundle.map((file) => ({ path: file.path, bytes: file.bytes })),
    });
    expect(result).toMatchObject({ name, created: true });
    expect(posts().map((request) => request.outcome)).toEqual([503, 'proxied']);
    const [first, second] = posts();
    // The same parts both times (the boundary may differ): every file's bytes appear in each body.
    for (const body of [first!.body, second!.body]) {
      for (const file of bundle) expect(body.includes(Buffer.from(file.bytes))).toBe(true);
    }
    expect(events).toEqual([expect.objectContaining({ status: 503, retryAfter: true, attempt: 1 })]);
    // What the registry stored is the bundle, file for file.
    const stored = await readServedArchive((await client.getBundle(name)).value, 'tar.gz', DEFAULT_LIMITS);
    expect(stored.map((file) => file.path).sort()).toEqual(['SKILL.md', 'references/guide.md']);
  });

  it('without Retry-After, waits a capped exponential backoff with jitter; reads retry too', async () => {
    const { client, events } = clientOf(proxy.url, { baseDelayMs: 40, maxDelayMs: 100 });
    proxy.seen.length = 0;
    proxy.script([{ status: 503 }, { status: 503 }, { status: 429 }], (method) => method === 'GET');
    const page = await client.listSkills();
    expect(page.value.items.length).toBeGreaterThan(0);
    expect(proxy.seen.map((request) => request.outcome)).toEqual([503, 503, 429, 'proxied']);
    expect(events.map((event) => event.retryAfter)).toEqual([false, false, false]);
    // Attempt n waits between half and all of min(cap, base * 2^(n-1)).
    const caps = [40, 80, 100];
    events.forEach((event, index) => {
      expect(event.delayMs).toBeGreaterThanOrEqual(caps[index]! / 2);
      expect(event.delayMs).toBeLessThanOrEqual(caps[index]!);
    });
  });

  it('gives up after the last attempt with the last answer as a RegistryError', async () => {
    const { client, events } = clientOf(proxy.url, { retries: 2 });
    proxy.seen.length = 0;
    proxy.script([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
    const error = await client.listVersions('anything').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(RegistryError);
    expect((error as RegistryError).status).toBe(503);
    expect(proxy.seen).toHaveLength(3);
    expect(events.map((event) => event.attempt)).toEqual([1, 2]);
  });

  it('never waits past the total wait cap: a Retry-After beyond it fails at once', async () => {
    const { client, events } = clientOf(proxy.url);
    proxy.seen.length = 0;
    proxy.script([{ status: 429, headers: { 'retry-after': '120' } }]);
    const started = Date.now();
    const error = await client.listSkills({ limit: 3 }).catch((failure: unknown) => failure);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toMatchObject({ status: 429 });
    expect(events).toEqual([]);
    expect(proxy.seen).toHaveLength(1);

    // With a 1.5 s budget, one 1 s wait fits and the second does not.
    const tight = clientOf(proxy.url, { maxTotalWaitMs: 1500 });
    proxy.seen.length = 0;
    proxy.script([
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '1' } },
    ]);
    const second = await tight.client.listSkills({ limit: 4 }).catch((failure: unknown) => failure);
    expect(second).toMatchObject({ status: 429 });
    expect(proxy.seen).toHaveLength(2);
    expect(tight.events).toHaveLength(1);

    // A Retry-After of exactly what is left is waited for; the jitter never takes it past the cap.
    const exact = clientOf(proxy.url, { maxTotalWaitMs: 1000 });
    proxy.seen.length = 0;
    proxy.script([{ status: 503, headers: { 'retry-after': '1' } }]);
    expect((await exact.client.listSkills({ limit: 5 })).value.items.length).toBeGreaterThan(0);
    expect(exact.events.map((event) => event.delayMs)).toEqual([1000]);
  });

  it('does not retry 400, 401, 403, 404, 409 or 422, nor anything when retry is off', async () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      const { client, events } = clientOf(proxy.url);
      proxy.seen.length = 0;
      proxy.script([{ status }, { status }]);
      const error = await client
        .publish({ type: 'markdown', text: skillMd({ name: uniqueName('never'), description: 'x' }) })
        .catch((failure: unknown) => failure);
      expect(error, String(status)).toMatchObject({ status });
      expect(proxy.seen, String(status)).toHaveLength(1);
      expect(events, String(status)).toEqual([]);
    }
    proxy.script([]);

    // The service's own refusals, straight from it: one request each.
    const calls: string[] = [];
    const counting = new SkillRegistryClient({
      url: upstream,
      token: ADMIN_TOKEN,
      retry: { baseDelayMs: 20 },
      fetch: async (input, init) => {
        calls.push(`${init?.method ?? 'GET'} ${String(input)}`);
        return fetch(input, init);
      },
    });
    const name = uniqueName('conflicted');
    await counting.publish(
      { type: 'markdown', text: skillMd({ name, description: 'One.' }) },
      { version: '1.0.0' },
    );
    calls.length = 0;
    const refusals = [
      counting.publish(
        { type: 'markdown', text: skillMd({ name, description: 'Two.' }) },
        { version: '1.0.0' },
      ),
      counting.publish({ type: 'markdown', text: skillMd({ name: 'Bad Name', description: 'x' }) }),
      counting.getSkill('no-such-skill-for-retries'),
      new SkillRegistryClient({ url: upstream, token: 'skr_unknown-token' }).listTokens(),
    ];
    const statuses = await Promise.all(
      refusals.map((promise) =>
        promise.then(
          () => 200,
          (error: RegistryError) => error.status,
        ),
      ),
    );
    expect(statuses).toEqual([409, 422, 404, 401]);
    expect(calls).toHaveLength(3);

    const off = new SkillRegistryClient({ url: proxy.url, retry: false });
    proxy.seen.length = 0;
    proxy.script([{ status: 503, headers: { 'retry-after': '0' } }]);
    await expect(off.listSkills()).rejects.toMatchObject({ status: 503 });
    expect(proxy.seen).toHaveLength(1);
  });

  it('retries a refused connection until the server is up', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const late = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify([{ version: '1.0.0', digest: 'sha256:x', createdAt: '', yanked: false, tags: [] }]),
      );
    });
    const { client, events } = clientOf(`http://127.0.0.1:${port}`, { baseDelayMs: 200 });
    setTimeout(() => late.listen(port, '127.0.0.1'), 150);
    try {
      const versions = await client.listVersions('late');
      expect(versions.value[0]?.version).toBe('1.0.0');
      expect(events.length).toBeGreaterThanOrEqual(1);
      expect(events[0]).toMatchObject({ reason: 'ECONNREFUSED', status: undefined });
    } finally {
      late.closeAllConnections();
      await new Promise((resolve) => late.close(resolve));
    }
  });

  it('retries a connection reset for reads and publishes, never for a token creation', async () => {
    const { client, events } = clientOf(proxy.url);
    proxy.seen.length = 0;
    proxy.script(['reset'], (method) => method === 'GET');
    expect((await client.listSkills({ limit: 2 })).value.items.length).toBeGreaterThan(0);
    expect(proxy.seen.map((request) => request.outcome)).toEqual(['reset', 'proxied']);

    // A publish whose connection drops is sent again: identical content cannot create twice.
    const name = uniqueName('reset');
    proxy.seen.length = 0;
    proxy.script(['reset'], (method) => method === 'POST');
    const published = await client.publish({
      type: 'markdown',
      text: skillMd({ name, description: 'Sent twice.' }),
    });
    expect(published).toMatchObject({ name, created: true });
    expect(posts().map((request) => request.outcome)).toEqual(['reset', 'proxied']);
    expect(events.every((event) => event.status === undefined)).toBe(true);

    proxy.seen.length = 0;
    proxy.script(['reset'], (method) => method === 'POST');
    const error = await client
      .createToken({ name: 'reset-token', scopes: ['read'] })
      .catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TypeError);
    expect(posts().map((request) => request.outcome)).toEqual(['reset']);
    // ...but a 429 means nothing was done, so a token creation does retry that.
    proxy.seen.length = 0;
    proxy.script([{ status: 429, headers: { 'retry-after': '0' } }], (method) => method === 'POST');
    const token = await client.createToken({ name: 'after-429', scopes: ['read'] });
    expect(token.secret).toBeTruthy();
    expect(posts().map((request) => request.outcome)).toEqual([429, 'proxied']);
  });
});

describe("against the service's own write rate limit", () => {
  let limited: TestApp;
  let url: string;
  beforeAll(async () => {
    limited = await createTestApp({
      SKILLREG_RATE_LIMIT_WRITES: '2',
      SKILLREG_RATE_LIMIT_WINDOW_SECONDS: '1',
    });
    url = await listening(limited.app);
  });
  afterAll(async () => limited?.close());

  it('publishes past the limit by waiting out each window as Retry-After says', async () => {
    const { client, events } = clientOf(url);
    const names = Array.from({ length: 5 }, () => uniqueName('limited'));
    const results = [];
    for (const name of names) {
      results.push(
        await client.publish({ type: 'markdown', text: skillMd({ name, description: 'Limited.' }) }),
      );
    }
    expect(results.map((result) => [result.name, result.created])).toEqual(names.map((name) => [name, true]));
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const event of events)
      expect(event).toMatchObject({ status: 429, retryAfter: true, method: 'POST' });
    const catalogue = await new SkillRegistryClient({ url }).listAllSkills();
    for (const name of names) expect(catalogue.map((item) => item.name)).toContain(name);

    // With retrying off the same burst is refused.
    const impatient = new SkillRegistryClient({ url, token: ADMIN_TOKEN, retry: { retries: 0 } });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push(
        await impatient
          .publish({ type: 'markdown', text: skillMd({ name: uniqueName('impatient'), description: 'x' }) })
          .then(
            () => 201,
            (error: RegistryError) => error.status,
          ),
      );
    }
    expect(statuses).toContain(429);
  });
});
