import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageDay } from '../../src/storage/usage-recorder.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

// Usage is counted per skill, version and UTC day by the read path of every face, in batches, and
// read back per skill (a chart) and per scope (top skills, never loaded).

let ctx: TestApp;
let url: string;
beforeAll(async () => {
  ctx = await createTestApp({ SKILLREG_USAGE_DAYS: '60' });
  url = await listening(ctx.app);
});
afterAll(async () => ctx?.close());

const today = () => usageDay(Date.now());

async function publishIn(namespace: string, name: string, description = `Does ${name} things.`) {
  const res = await publish(
    ctx.app,
    files({ 'SKILL.md': skillMd({ name, description }), 'references/guide.md': '# Guide\n' }),
    { query: `namespace=${namespace}` },
  );
  expect(res.statusCode, res.body).toBe(201);
}

async function get(path: string, headers: Record<string, string> = {}) {
  return ctx.app.inject({ url: path, headers });
}

async function usageOf(prefix: string, name: string, days = 7) {
  const res = await get(`${prefix}/skills/${name}/usage?days=${days}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function mcpClient(path: string): Promise<Client> {
  const client = new Client({ name: 'usage-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, url)));
  return client;
}

describe('usage per skill and day', () => {
  it('counts loads (HTTP bodies, SKILL.md, MCP), file reads and bundle downloads; revalidations are not uses', async () => {
    const ns = uniqueName('usage-ns');
    const name = uniqueName('used');
    await publishIn(ns, name);
    const prefix = `/namespaces/${ns}`;

    const first = await get(`${prefix}/skills/${name}/content`);
    expect(first.statusCode).toBe(200);
    expect((await get(`${prefix}/skills/${name}/content?format=json`)).statusCode).toBe(200);
    expect((await get(`${prefix}/skills/${name}/files/SKILL.md`)).statusCode).toBe(200);
    expect((await get(`${prefix}/skills/${name}/files/references/guide.md`)).statusCode).toBe(200);
    expect((await get(`${prefix}/skills/${name}/bundle`)).statusCode).toBe(200);
    // The console's reads (people, not agents) are served and not counted.
    const browsing = await get(`${prefix}/skills/${name}/content`, { 'x-skillreg-usage': 'ignore' });
    expect(browsing.statusCode).toBe(200);
    // A poll answered 304 delivers nothing: not a use.
    const revalidated = await get(`${prefix}/skills/${name}/content`, {
      'if-none-match': first.headers.etag!,
    });
    expect(revalidated.statusCode).toBe(304);

    const client = await mcpClient(`${prefix}/mcp`);
    await client.callTool({ name: 'load_skill', arguments: { name } });
    await client.callTool({ name: 'read_skill_file', arguments: { name, path: 'references/guide.md' } });
    await client.readResource({ uri: `skill://${name}/SKILL.md` });
    await client.close();

    const usage = await usageOf(prefix, name);
    expect(usage.name).toBe(name);
    expect(usage.namespace).toBe(ns);
    expect(usage.to).toBe(today());
    expect(usage.days).toHaveLength(7);
    expect(usage.days.at(-1)).toEqual({ date: today(), loads: 5, files: 2, downloads: 1 });
    expect(
      usage.days.slice(0, 6).every((day: { loads: number; files: number }) => day.loads + day.files === 0),
    ).toBe(true);
    expect(usage.totals).toEqual({ loads: 5, files: 2, downloads: 1 });
    expect(usage.versions).toEqual([{ version: '1.0.0', loads: 5, files: 2, downloads: 1 }]);
  });

  it('keeps days apart and versions apart, and a window leaves older days out', async () => {
    const ns = uniqueName('usage-days');
    const name = uniqueName('dated');
    await publishIn(ns, name);
    await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Version two.' }) }), {
      query: `namespace=${ns}`,
    });
    const prefix = `/namespaces/${ns}`;
    expect((await get(`${prefix}/skills/${name}/content?version=1.0.0`)).statusCode).toBe(200);
    expect((await get(`${prefix}/skills/${name}/content`)).statusCode).toBe(200);
    await ctx.app.registry.usage.skillUsage({ kind: 'namespace', namespace: ns }, name, 1); // flushes
    // Older uses, as earlier days left them.
    await ctx.database.db.execute(sql`
      insert into skill_usage (skill_id, version, day, loads, files, downloads)
      select id, '1.0.0', (now() at time zone 'utc')::date - 3, 4, 1, 0 from skills where namespace = ${ns} and name = ${name}
      union all
      select id, '1.0.0', (now() at time zone 'utc')::date - 20, 9, 0, 0 from skills where namespace = ${ns} and name = ${name}`);

    const week = await usageOf(prefix, name, 7);
    expect(week.days.at(-4)).toMatchObject({ loads: 4, files: 1 });
    expect(week.totals).toEqual({ loads: 6, files: 1, downloads: 0 });
    expect(week.versions).toEqual([
      { version: '1.0.0', loads: 5, files: 1, downloads: 0 },
      { version: '1.0.1', loads: 1, files: 0, downloads: 0 },
    ]);
    expect((await usageOf(prefix, name, 30)).totals.loads).toBe(15);
  });

  it('deletes days older than SKILLREG_USAGE_DAYS and refuses a window reaching past them', async () => {
    const ns = uniqueName('usage-prune');
    const name = uniqueName('old');
    await publishIn(ns, name);
    await ctx.database.db.execute(sql`
      insert into skill_usage (skill_id, version, day, loads, files, downloads)
      select id, '1.0.0', (now() at time zone 'utc')::date - d, 1, 0, 0
      from skills, (values (59), (60), (61), (200)) as ago(d) where namespace = ${ns} and name = ${name}`);
    // The recorder prunes after a flush at most hourly; here, at once.
    await ctx.app.registry.usage.prune();
    const left = await ctx.database.db.execute(sql`
      select count(*)::int as n from skill_usage u join skills s on s.id = u.skill_id
      where s.namespace = ${ns} and s.name = ${name}`);
    expect((left as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(2);

    const tooFar = await get(`/namespaces/${ns}/skills/${name}/usage?days=61`);
    expect(tooFar.statusCode).toBe(400);
    expect(tooFar.headers['content-type']).toContain('application/problem+json');
    expect(tooFar.json().detail).toContain('SKILLREG_USAGE_DAYS');
    expect((await get(`/namespaces/${ns}/skills/${name}/usage?days=0`)).statusCode).toBe(400);
    const unknown = await get(`/namespaces/${ns}/skills/no-such-skill-here/usage`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
  });
});

describe('usage of a scope', () => {
  it('ranks the top skills by loads and lists those never loaded', async () => {
    const ns = uniqueName('usage-top');
    const [busy, downloaded, idle, unused] = ['busy', 'downloaded', 'idle', 'unused'].map((p) =>
      uniqueName(`${p}`),
    ) as [string, string, string, string];
    for (const name of [busy, downloaded, idle, unused]) await publishIn(ns, name);
    const prefix = `/namespaces/${ns}`;
    for (let i = 0; i < 3; i++) await get(`${prefix}/skills/${busy}/content`);
    await get(`${prefix}/skills/${idle}/content`);
    await get(`${prefix}/skills/${downloaded}/bundle?format=zip`);

    const res = await get(`${prefix}/usage?days=7`);
    expect(res.statusCode, res.body).toBe(200);
    const usage = res.json();
    expect(usage.top.map((entry: { name: string }) => entry.name)).toEqual([busy, idle, downloaded]);
    expect(usage.top[0]).toMatchObject({ name: busy, namespace: ns, version: '1.0.0', loads: 3 });
    expect(usage.top[0].lastLoadedAt).not.toBeNull();
    expect(usage.used).toBe(3);
    expect(usage.neverLoaded.map((entry: { name: string }) => entry.name)).toEqual(
      [downloaded, unused].sort(),
    );
    expect(usage.neverLoadedCount).toBe(2);
    expect((await get(`${prefix}/usage?limit=1`)).json().top.map((e: { name: string }) => e.name)).toEqual([
      busy,
    ]);
  });

  it('in a view, counts each use against the layer the name resolves to and lists every name once', async () => {
    const org = uniqueName('usage-org');
    const team = uniqueName('usage-team');
    const shared = uniqueName('shared');
    const orgOnly = uniqueName('org-only');
    await publishIn(org, shared);
    await publishIn(org, orgOnly);
    await publishIn(team, shared, 'The team override.');
    const view = uniqueName('usage-view');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { layers: [org, team] },
    });
    expect(put.statusCode, put.body).toBe(201);
    await get(`/views/${view}/skills/${shared}/content`);
    await get(`/views/${view}/skills/${shared}/content?format=json`);

    const usage = (await get(`/views/${view}/usage`)).json();
    expect(usage.top).toEqual([expect.objectContaining({ name: shared, namespace: team, loads: 2 })]);
    expect(usage.neverLoaded).toEqual([expect.objectContaining({ name: orgOnly, namespace: org })]);
    expect((await usageOf(`/views/${view}`, shared)).namespace).toBe(team);
    expect((await usageOf(`/namespaces/${org}`, shared)).totals.loads).toBe(0);
  });
});
