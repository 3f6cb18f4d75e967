/**
 * The search service behind every face: the catalogue's q, other dist-tags, the prompt's q, paging,
 * the limits of a request and readiness while the index is built.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../src/domain/scope.js';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

describe('search service', () => {
  let ctx: TestApp;
  const kafka = uniqueName('kafka-lag');
  const invoices = uniqueName('invoice-reader');

  const publish = (name: string, description: string, query = '') =>
    ctx.app.inject({
      method: 'POST',
      url: `/skills${query}`,
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: `---\nname: ${name}\ndescription: ${description}\n---\n## Steps\n\nCheck consumer offsets.\n`,
    });

  beforeAll(async () => {
    ctx = await createTestApp();
    expect((await publish(kafka, 'Diagnose Kafka consumer lag and stuck partitions.')).statusCode).toBe(201);
    expect((await publish(invoices, 'Extract totals and dates from PDF invoices.')).statusCode).toBe(201);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('ranks GET /skills?q= best first with why each matched, and pages with a cursor', async () => {
    const first = (await ctx.app.inject('/skills?q=why+are+my+kafka+consumers+lagging&limit=1')).json();
    expect(first.items.map((item: { name: string }) => item.name)).toEqual([kafka]);
    expect(first.items[0].match.why).toContain('kafka');
    expect(first.items[0].match.fields.name).toContain('kafka');
    const broad = '/skills?q=kafka+consumer+invoices+offsets&limit=1';
    const page = (await ctx.app.inject(broad)).json();
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = (await ctx.app.inject(`${broad}&cursor=${page.nextCursor}`)).json();
    expect(next.items[0].name).not.toBe(page.items[0].name);
  });

  it('names the related words a skill matched through, apart from the request words', async () => {
    const page = (await ctx.app.inject(`/skills?q=troubleshoot+${kafka}&limit=1`)).json();
    expect(page.items[0].name).toBe(kafka);
    expect(page.items[0].match.related).toEqual([{ word: 'troubleshoot', as: 'diagnose' }]);
    expect(page.items[0].match.fields.description).toContain('diagnose');
    expect(page.items[0].match.why).toContain('related: troubleshoot→diagnose');
  });

  it('refuses an empty or an overlong request with a problem naming the limit', async () => {
    const long = await ctx.app.inject(`/search?q=${'word '.repeat(900)}`);
    expect(long.statusCode).toBe(400);
    expect(long.headers['content-type']).toContain('application/problem+json');
    expect(long.json().detail).toMatch(/4000/);
    expect((await ctx.app.inject('/search?q=%20%20')).statusCode).toBe(400);
  });

  it('searches another dist-tag with an index of its own, and follows a tag move', async () => {
    const name = uniqueName('tagged');
    expect((await publish(name, 'Rotate TLS certificates.', '?version=1.0.0')).statusCode).toBe(201);
    expect((await publish(name, 'Renew DNS records.', '?version=2.0.0')).statusCode).toBe(201);
    const move = (version: string) =>
      ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/stable`,
        headers: adminAuth,
        payload: { version },
      });
    expect((await move('1.0.0')).statusCode).toBe(200);
    const stable = (q: string) =>
      ctx.app
        .inject(`/skills?tag=stable&q=${q}`)
        .then((res) => res.json().items.map((item: { name: string }) => item.name));
    expect(await stable('certificates')).toEqual([name]);
    expect(await stable('dns')).toEqual([]);
    expect((await move('2.0.0')).statusCode).toBe(200);
    expect(await stable('dns')).toEqual([name]);
    expect(await stable('certificates')).toEqual([]);
  });

  it('selects the prompt by the same ranking: best matches first', async () => {
    const body = (await ctx.app.inject('/prompt?format=json&q=pdf+invoice+totals')).json();
    expect(body.included[0].name).toBe(invoices);
  });

  it('is not ready while the index is built at start', async () => {
    const warming = ctx.app.registry.search.warm();
    expect(ctx.app.registry.search.warming).toBe(true);
    await warming;
    expect(ctx.app.registry.search.warming).toBe(false);
    expect((await ctx.app.inject('/readyz')).statusCode).toBe(200);
  });

  it('is not ready until the agent catalogue is read too, and says which part was read', async () => {
    const parts: string[] = [];
    // The copy's read is held until the readiness check has answered.
    const mirror = ctx.app.registry.agents.catalogues.mirror(DEFAULT_NAMESPACE);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const original = mirror.snapshot.bind(mirror);
    const read = vi.spyOn(mirror, 'snapshot').mockImplementation(async () => {
      await held;
      return original();
    });
    const warming = ctx.app.registry.warm((part, { error }) => {
      expect(error).toBeUndefined();
      parts.push(part);
    });
    try {
      expect(ctx.app.registry.warming).toBe(true);
      await vi.waitFor(() => expect(parts).toEqual(['search index']));
      const early = await ctx.app.inject('/readyz');
      expect(early.statusCode).toBe(503);
      expect(early.json().detail).toMatch(/search index and the agent catalogue/);
    } finally {
      release();
      read.mockRestore();
    }
    await warming;
    expect(parts).toEqual(['search index', 'agent catalogue', 'first search and prompt']);
    expect(ctx.app.registry.warming).toBe(false);
    expect((await ctx.app.inject('/readyz')).statusCode).toBe(200);
  });
});

describe('search with the read cache off', () => {
  let ctx: TestApp;

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_CACHE_MB: '0' });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  const publish = (name: string, version: string, description: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: `---\nname: ${name}\ndescription: ${description}\nmetadata:\n  version: "${version}"\n---\n# ${name}\n`,
    });

  it('answers from the database as it is, even after a write this process never heard of', async () => {
    const word = `zorb${Date.now().toString(36)}`;
    const steady = uniqueName('steady');
    const moved = uniqueName('moved');
    expect((await publish(steady, '1.0.0', `Handles ${word} requests.`)).statusCode).toBe(201);
    expect((await publish(moved, '1.0.0', `Handles ${word} requests too.`)).statusCode).toBe(201);
    expect((await publish(moved, '2.0.0', 'Handles something else entirely.')).statusCode).toBe(201);
    const names = async () =>
      (await ctx.app.inject(`/skills?q=${word}`)).json().items.map((item: { name: string }) => item.name);
    expect(await names()).toEqual([steady]);

    // Another writer moves `latest` back to 1.0.0 and sends no notification: only the database knows.
    await ctx.database.db.execute(sql`
      with bumped as (update registry_state set revision = revision + 1 where id = 1 returning revision),
      skill as (update skills set changed_revision = (select revision from bumped) where name = ${moved} returning id)
      update dist_tags set version_id = (
        select v.id from skill_versions v where v.skill_id = (select id from skill) and v.version = '1.0.0')
      where skill_id = (select id from skill) and tag = 'latest'`);

    expect((await names()).sort()).toEqual([moved, steady].sort());
    const page = (await ctx.app.inject(`/skills?q=${word}`)).json();
    expect(page.items.find((item: { name: string }) => item.name === moved).version).toBe('1.0.0');
  });
});
