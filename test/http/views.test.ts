import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { fetchVia, listening } from '../helpers/http.js';
import { startReplicas } from '../helpers/replicas.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

function skillText(name: string, description: string, body = `# ${name}\n`, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;
}

async function publishTo(
  app: FastifyInstance,
  namespace: string,
  text: string,
  query = '',
): Promise<LightMyRequestResponse> {
  const res = await app.inject({
    method: 'POST',
    url: `/namespaces/${namespace}/skills${query}`,
    headers: { ...adminAuth, 'content-type': 'text/markdown' },
    payload: text,
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res;
}

async function putView(
  app: FastifyInstance,
  view: string,
  layers: string[],
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'PUT', url: `/views/${view}`, headers: adminAuth, payload: { layers } });
}

/** Three namespaces: org (lowest), team, project (highest), with names shared between them. */
async function layered(app: FastifyInstance) {
  const org = uniqueName('org');
  const team = uniqueName('team');
  const project = uniqueName('proj');
  const shared = uniqueName('shared');
  const orgOnly = uniqueName('org-only');
  const teamOnly = uniqueName('team-only');
  await publishTo(app, org, skillText(shared, 'Org version of shared.', '# org shared\n'));
  await publishTo(app, org, skillText(orgOnly, 'Only the org has it.'));
  await publishTo(app, team, skillText(shared, 'Team version of shared.', '# team shared\n'));
  await publishTo(app, team, skillText(teamOnly, 'Only the team has it.'));
  await publishTo(app, project, skillText(uniqueName('proj-only'), 'Only the project has it.'));
  return { org, team, project, shared, orgOnly, teamOnly };
}

describe('reads under /namespaces/{ns}/', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('serves the whole read surface of one namespace, apart from default', async () => {
    const ns = uniqueName('team');
    const name = uniqueName('tool');
    await ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: skillText(name, 'Default flavour.', '# default body\n'),
    });
    await publishTo(ctx.app, ns, skillText(name, 'Team flavour for zeppelinwork.', '# team body\n'));
    const base = `/namespaces/${ns}`;

    const page = await ctx.app.inject({ url: `${base}/skills` });
    expect(page.statusCode).toBe(200);
    expect(page.json().items.map((item: { name: string }) => item.name)).toEqual([name]);
    const detail = await ctx.app.inject({ url: `${base}/skills/${name}` });
    expect(detail.json()).toMatchObject({
      name,
      description: 'Team flavour for zeppelinwork.',
      namespace: ns,
    });
    expect((await ctx.app.inject({ url: `${base}/skills/${name}/content` })).body).toBe('# team body\n');
    expect((await ctx.app.inject({ url: `/skills/${name}/content` })).body).toBe('# default body\n');
    expect((await ctx.app.inject({ url: `${base}/skills/${name}/files/SKILL.md` })).body).toContain(
      'team body',
    );
    const bundle = await ctx.app.inject({ url: `${base}/skills/${name}/bundle` });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toBe('application/gzip');
    const versions = await ctx.app.inject({ url: `${base}/skills/${name}/versions` });
    expect(versions.json().map((row: { version: string }) => row.version)).toEqual(['1.0.0']);

    const search = await ctx.app.inject({ url: `${base}/search?q=zeppelinwork` });
    expect(search.json().results.map((result: { name: string }) => result.name)).toEqual([name]);
    const rootSearch = await ctx.app.inject({ url: '/search?q=zeppelinwork' });
    expect(rootSearch.json().results).toEqual([]);
    const prompt = await ctx.app.inject({ url: `${base}/prompt?format=json` });
    const included = prompt.json().included as { name: string; location: string }[];
    expect(included.map((entry) => entry.name)).toEqual([name]);
    expect(included[0]!.location).toMatch(new RegExp(`${base}/skills/${name}/content$`));
    const tools = await ctx.app.inject({ url: `${base}/tools` });
    expect(JSON.stringify(tools.json())).toContain(name);

    const index = await ctx.app.inject({ url: `${base}/.well-known/agent-skills/index.json` });
    const entries = index.json().skills as { name: string; url: string; digest: string }[];
    expect(entries.map((entry) => entry.name)).toEqual([name]);
    const archive = await ctx.app.inject({ url: entries[0]!.url.replace(/^https?:\/\/[^/]+/, '') });
    expect(`sha256:${createHash('sha256').update(archive.rawPayload).digest('hex')}`).toBe(
      entries[0]!.digest,
    );
  });

  it('answers 404 for a namespace nothing was published into, on every route', async () => {
    const missing = uniqueName('ghost');
    for (const path of [
      'skills',
      'skills/x',
      'skills/x/content',
      'prompt',
      'tools',
      'search?q=x',
      '.well-known/agent-skills/index.json',
    ]) {
      const res = await ctx.app.inject({ url: `/namespaces/${missing}/${path}` });
      expect(res.statusCode, path).toBe(404);
      expect(res.json().detail).toContain(`no namespace '${missing}'`);
    }
  });

  it('keeps a namespace listing ETag when another namespace changes, and changes it on its own writes', async () => {
    const ns = uniqueName('quiet');
    const other = uniqueName('busy');
    await publishTo(ctx.app, ns, skillText(uniqueName('q'), 'Quiet.'));
    const first = await ctx.app.inject({ url: `/namespaces/${ns}/skills` });
    await publishTo(ctx.app, other, skillText(uniqueName('b'), 'Busy.'));
    const again = await ctx.app.inject({
      url: `/namespaces/${ns}/skills`,
      headers: { 'if-none-match': first.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    await publishTo(ctx.app, ns, skillText(uniqueName('q2'), 'Quiet two.'));
    const changed = await ctx.app.inject({
      url: `/namespaces/${ns}/skills`,
      headers: { 'if-none-match': first.headers.etag as string },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().items).toHaveLength(2);
  });
});

describe('views', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('is created, listed, read, replaced and deleted by an admin, each change audited', async () => {
    const { org, team } = await layered(ctx.app);
    const view = uniqueName('fleet');
    const created = await putView(ctx.app, view, [org, team]);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ name: view, layers: [org, team], description: null });
    const replaced = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: adminAuth,
      payload: { layers: [team, org], description: 'Team under org' },
    });
    expect(replaced.statusCode).toBe(200);
    const listed = await ctx.app.inject({ url: '/views' });
    expect(listed.json().items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: view, layers: [team, org], description: 'Team under org' }),
      ]),
    );
    expect((await ctx.app.inject({ url: `/views/${view}` })).json().layers).toEqual([team, org]);
    const anonymous = await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      payload: { layers: [org] },
    });
    expect(anonymous.statusCode).toBe(401);

    expect(
      (await ctx.app.inject({ method: 'DELETE', url: `/views/${view}`, headers: adminAuth })).statusCode,
    ).toBe(204);
    const gone = await ctx.app.inject({ url: `/views/${view}/skills` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().detail).toContain(`no view '${view}'`);
    const audit = await ctx.app.inject({ url: '/audit?limit=500', headers: adminAuth });
    const actions = audit
      .json()
      .items.filter((entry: { detail: { view?: string } }) => entry.detail.view === view)
      .map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(['view.delete', 'view.put', 'view.put']);
  });

  it('refuses layers that are no namespace, or listed twice, with a 422 naming each', async () => {
    const { org } = await layered(ctx.app);
    const missing = uniqueName('nowhere');
    const res = await putView(ctx.app, uniqueName('bad'), [org, missing, org]);
    expect(res.statusCode).toBe(422);
    const errors = res.json().errors as { path: string; detail: string }[];
    expect(errors.map((error) => error.path).sort()).toEqual(['layers[1]', 'layers[2]']);
    expect(res.json().detail).toContain(`no namespace '${missing}'`);
    const invalid = await putView(ctx.app, 'Bad-View', [org]);
    expect(invalid.statusCode).toBe(400);
    const empty = await putView(ctx.app, uniqueName('empty'), []);
    expect(empty.statusCode).toBe(400);
  });

  it('resolves each name to the last layer holding it: catalogue, metadata, content, prompt, index and search', async () => {
    const { org, team, shared, orgOnly, teamOnly, project } = await layered(ctx.app);
    const view = uniqueName('fleet');
    expect((await putView(ctx.app, view, [org, team])).statusCode).toBe(201);
    const base = `/views/${view}`;

    const page = await ctx.app.inject({ url: `${base}/skills` });
    const items = page.json().items as { name: string; namespace: string; description: string }[];
    expect(items.map((item) => [item.name, item.namespace]).sort()).toEqual(
      [
        [shared, team],
        [orgOnly, org],
        [teamOnly, team],
      ].sort(),
    );
    // Names are unique after resolution; a project-only skill is not in this view.
    expect(items.some((item) => item.name.startsWith(project))).toBe(false);

    const detail = await ctx.app.inject({ url: `${base}/skills/${shared}` });
    expect(detail.json()).toMatchObject({
      name: shared,
      description: 'Team version of shared.',
      resolvedFrom: team,
      shadows: [{ namespace: org, version: '1.0.0' }],
    });
    expect((await ctx.app.inject({ url: `${base}/skills/${shared}/content` })).body).toBe('# team shared\n');
    expect((await ctx.app.inject({ url: `${base}/skills/${orgOnly}` })).json()).toMatchObject({
      resolvedFrom: org,
      shadows: [],
    });

    const prompt = (await ctx.app.inject({ url: `${base}/prompt?format=json` })).json();
    const included = prompt.included as { name: string; namespace: string; location: string }[];
    expect(included.find((entry) => entry.name === shared)).toMatchObject({
      namespace: team,
      location: expect.stringMatching(new RegExp(`${base}/skills/${shared}/content$`)),
    });
    expect(prompt.prompt).toContain('Team version of shared.');
    expect(prompt.prompt).not.toContain('Org version of shared.');

    const index = (await ctx.app.inject({ url: `${base}/.well-known/agent-skills/index.json` })).json();
    const entry = (index.skills as { name: string; namespace: string; url: string; digest: string }[]).find(
      (one) => one.name === shared,
    )!;
    expect(entry.namespace).toBe(team);
    expect(entry.url).toContain(`/namespaces/${team}/skills/${shared}/bundle?version=1.0.0`);
    const archive = await ctx.app.inject({ url: entry.url.replace(/^https?:\/\/[^/]+/, '') });
    expect(`sha256:${createHash('sha256').update(archive.rawPayload).digest('hex')}`).toBe(entry.digest);

    const search = (
      await ctx.app.inject({ url: `${base}/search?q=${encodeURIComponent('version of shared')}` })
    ).json();
    const names = (search.results as { name: string; namespace: string }[]).map((result) => [
      result.name,
      result.namespace,
    ]);
    expect(names).toContainEqual([shared, team]);
    expect(names.filter(([name]) => name === shared)).toHaveLength(1);
    const searchPage = (
      await ctx.app.inject({ url: `${base}/skills?q=${encodeURIComponent('only the org has it')}` })
    ).json();
    expect(searchPage.items[0]).toMatchObject({ name: orgOnly, namespace: org });
  });

  it('falls back to the next lower layer when a higher one has nothing servable: yanked, or no such tag', async () => {
    const { org, team, shared } = await layered(ctx.app);
    const view = uniqueName('fallback');
    await putView(ctx.app, view, [org, team]);
    const base = `/views/${view}`;
    // The org tags its version stable; the team has no stable tag: the stable read falls back to the org.
    const tagged = await ctx.app.inject({
      method: 'PUT',
      url: `/namespaces/${org}/skills/${shared}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(tagged.statusCode).toBe(200);
    expect((await ctx.app.inject({ url: `${base}/skills/${shared}/content?tag=stable` })).body).toBe(
      '# org shared\n',
    );
    const stablePage = (await ctx.app.inject({ url: `${base}/skills?tag=stable` })).json();
    expect(stablePage.items).toEqual([expect.objectContaining({ name: shared, namespace: org })]);

    const before = await ctx.app.inject({ url: `${base}/skills/${shared}/content` });
    expect(before.body).toBe('# team shared\n');
    const yanked = await ctx.app.inject({
      method: 'DELETE',
      url: `/namespaces/${team}/skills/${shared}/versions/1.0.0`,
      headers: adminAuth,
    });
    expect(yanked.statusCode).toBe(200);
    // Visible on the very next request: the org's version now wins.
    const after = await ctx.app.inject({
      url: `${base}/skills/${shared}/content`,
      headers: { 'if-none-match': before.headers.etag as string },
    });
    expect(after.statusCode).toBe(200);
    expect(after.body).toBe('# org shared\n');
    expect((await ctx.app.inject({ url: `${base}/skills/${shared}` })).json()).toMatchObject({
      resolvedFrom: org,
      shadows: [],
    });
    const page = (await ctx.app.inject({ url: `${base}/skills` })).json();
    expect(page.items.find((item: { name: string }) => item.name === shared).namespace).toBe(org);
    // The yanked version stays readable by exact version where it lives.
    expect((await ctx.app.inject({ url: `${base}/skills/${shared}/content?version=1.0.0` })).body).toBe(
      '# team shared\n',
    );
  });

  it('keeps ETags through unrelated writes and changes them with a layer write or a view edit', async () => {
    const { org, team, project } = await layered(ctx.app);
    const view = uniqueName('etags');
    await putView(ctx.app, view, [org, team]);
    for (const transport of ['inject', 'http'] as const) {
      const first = await fetchVia(transport, ctx.app, `/views/${view}/skills`);
      const etag = first.headers.etag as string;
      await publishTo(ctx.app, uniqueName('elsewhere'), skillText(uniqueName('x'), 'Elsewhere.'));
      const same = await fetchVia(transport, ctx.app, `/views/${view}/skills`, { 'if-none-match': etag });
      expect(same.statusCode, transport).toBe(304);
      await publishTo(ctx.app, team, skillText(uniqueName('new'), `New in the team (${transport}).`));
      const changed = await fetchVia(transport, ctx.app, `/views/${view}/skills`, { 'if-none-match': etag });
      expect(changed.statusCode, transport).toBe(200);
    }
    const before = await fetchVia('http', ctx.app, `/views/${view}/skills`);
    await putView(ctx.app, view, [org, team, project]);
    const edited = await fetchVia('http', ctx.app, `/views/${view}/skills`, {
      'if-none-match': before.headers.etag as string,
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().items.some((item: { namespace: string }) => item.namespace === project)).toBe(true);
  });

  it('serves MCP through the view: list_skills, search_skills and load_skill resolve by layer', async () => {
    const { org, team, shared, orgOnly } = await layered(ctx.app);
    const view = uniqueName('mcp');
    await putView(ctx.app, view, [org, team]);
    const client = new Client({ name: 'views-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`/views/${view}/mcp`, await listening(ctx.app))),
    );
    try {
      const listed = (await client.callTool({ name: 'list_skills', arguments: {} })) as CallToolResult;
      const skills = (listed.structuredContent as { skills: { name: string }[] }).skills.map(
        (skill) => skill.name,
      );
      expect(skills).toEqual(expect.arrayContaining([shared, orgOnly]));
      const loaded = (await client.callTool({
        name: 'load_skill',
        arguments: { name: shared },
      })) as CallToolResult;
      const text = loaded.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
      expect(text).toContain('team shared');
      const found = (await client.callTool({
        name: 'search_skills',
        arguments: { query: 'only the org has it' },
      })) as CallToolResult;
      const results = (found.structuredContent as { results: { name: string; namespace?: string }[] })
        .results;
      expect(results[0]).toMatchObject({ name: orgOnly, namespace: org });
    } finally {
      await client.close();
    }
  });
});

describe('views, with SKILLREG_READ_AUTH=true', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => ctx?.close());

  it('lets a token limited to team-* read a view only when it covers every layer', async () => {
    const team = `team-${uniqueName('a')}`;
    const other = uniqueName('other');
    await publishTo(ctx.app, team, skillText(uniqueName('t'), 'Team.'));
    await publishTo(ctx.app, other, skillText(uniqueName('o'), 'Other.'));
    const inside = uniqueName('inside');
    const across = uniqueName('across');
    await putView(ctx.app, inside, [team]);
    await putView(ctx.app, across, [other, team]);
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: 'team-reader', scopes: ['read'], namespaces: ['team-*'] },
    });
    const secret = created.json().secret as string;
    expect(
      (await ctx.app.inject({ url: `/views/${inside}/skills`, headers: bearer(secret) })).statusCode,
    ).toBe(200);
    const refused = await ctx.app.inject({ url: `/views/${across}/skills`, headers: bearer(secret) });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toContain(`'${other}'`);
    expect(
      (await ctx.app.inject({ url: `/namespaces/${team}/skills`, headers: bearer(secret) })).statusCode,
    ).toBe(200);
    expect(
      (await ctx.app.inject({ url: `/namespaces/${other}/skills`, headers: bearer(secret) })).statusCode,
    ).toBe(403);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL || process.env.SKILLREG_TEST_DOCKER)(
  'views across replicas',
  () => {
    it('a view edit on one replica is what the other serves on its very next request', async () => {
      const replicas = await startReplicas(2);
      try {
        const [a, b] = replicas.apps as [FastifyInstance, FastifyInstance];
        const { org, team, shared } = await layered(a);
        const view = uniqueName('replicated');
        expect((await putView(a, view, [org])).statusCode).toBe(201);
        const onB = await b.inject({ url: `/views/${view}/skills/${shared}/content` });
        expect(onB.body).toBe('# org shared\n');
        expect((await putView(a, view, [org, team])).statusCode).toBe(200);
        const { until } = await import('../helpers/polling.js');
        // NOTIFY reaches b within milliseconds; a request after it must see the edit.
        await until(
          async () =>
            (await b.inject({ url: `/views/${view}/skills/${shared}/content` })).body === '# team shared\n',
          2_000,
        );
        const detail = await b.inject({ url: `/views/${view}/skills/${shared}` });
        expect(detail.json().resolvedFrom).toBe(team);
      } finally {
        await replicas.close();
      }
    });
  },
);
