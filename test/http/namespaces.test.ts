import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { expectProblem } from '../helpers/problem.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

function skillText(name: string, description: string, body = `# ${name}\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

function post(
  app: FastifyInstance,
  url: string,
  text: string,
  headers: Record<string, string> = adminAuth,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': 'text/markdown' },
    payload: text,
  });
}

async function token(app: FastifyInstance, body: Record<string, unknown>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/tokens', headers: adminAuth, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().secret;
}

describe('publishing into namespaces', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('creates a namespace on first publish, by ?namespace= or by the prefixed route, with its own version line', async () => {
    const ns = uniqueName('team');
    const name = uniqueName('shared');
    const inDefault = await post(ctx.app, '/skills', skillText(name, 'The org version.'));
    expect(inDefault.statusCode).toBe(201);
    expect(inDefault.json().version).toBe('1.0.0');

    const first = await post(ctx.app, `/skills?namespace=${ns}`, skillText(name, 'The team version.'));
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().version).toBe('1.0.0');
    expect(first.headers.location).toBe(`/namespaces/${ns}/skills/${name}?version=1.0.0`);

    const second = await post(ctx.app, `/namespaces/${ns}/skills`, skillText(name, 'The team version, v2.'));
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().version).toBe('1.0.1');
    // The same content again is idempotent in that namespace too.
    const again = await post(ctx.app, `/namespaces/${ns}/skills`, skillText(name, 'The team version, v2.'));
    expect(again.statusCode).toBe(200);
    expect(again.json().version).toBe('1.0.1');

    // The unprefixed API is `default`, unchanged by the team's writes.
    const root = await ctx.app.inject({ url: `/skills/${name}/versions` });
    expect(root.json().map((row: { version: string }) => row.version)).toEqual(['1.0.0']);
    const content = await ctx.app.inject({ url: `/skills/${name}` });
    expect(content.json().description).toBe('The org version.');

    const listed = await ctx.app.inject({ url: '/namespaces' });
    expect(listed.statusCode).toBe(200);
    expect(listed.headers.etag).toBeDefined();
    const items = listed.json().items as { name: string; skills: number; createdAt: string }[];
    expect(items.map((item) => item.name)).toEqual([...items.map((item) => item.name)].sort());
    expect(items.find((item) => item.name === ns)).toMatchObject({
      skills: 1,
      createdAt: expect.any(String),
    });
    expect(items.find((item) => item.name === 'default')?.skills).toBeGreaterThanOrEqual(1);

    const revalidated = await ctx.app.inject({
      url: '/namespaces',
      headers: { 'if-none-match': listed.headers.etag as string },
    });
    expect(revalidated.statusCode).toBe(304);
  });

  it('moves tags and yanks within the namespace named, leaving the same name elsewhere alone', async () => {
    const ns = uniqueName('team');
    const name = uniqueName('tagged');
    await post(ctx.app, '/skills', skillText(name, 'Org.'));
    await post(ctx.app, `/skills?namespace=${ns}`, skillText(name, 'Team one.'));
    await post(ctx.app, `/skills?namespace=${ns}`, skillText(name, 'Team two.'));

    const moved = await ctx.app.inject({
      method: 'PUT',
      url: `/namespaces/${ns}/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const yanked = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.1?namespace=${ns}`,
      headers: adminAuth,
    });
    expect(yanked.statusCode, yanked.body).toBe(200);
    expect(yanked.json().latest).toBe('1.0.0');

    // Default's skill of that name has no 1.0.1 and no stable tag.
    const rootVersions = await ctx.app.inject({ url: `/skills/${name}/versions` });
    expect(rootVersions.json()).toEqual([
      expect.objectContaining({ version: '1.0.0', tags: ['latest'], yanked: false }),
    ]);
    const audit = await ctx.app.inject({ url: `/audit?skill=${name}`, headers: adminAuth });
    const actions = audit
      .json()
      .items.map((entry: { action: string; namespace?: string }) => [entry.action, entry.namespace]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['publish', 'default'],
        ['publish', ns],
        ['tag', ns],
        ['yank', ns],
      ]),
    );
    const filtered = await ctx.app.inject({ url: `/audit?namespace=${ns}`, headers: adminAuth });
    expect(filtered.json().items.map((entry: { action: string }) => entry.action)).toEqual([
      'yank',
      'tag',
      'publish',
      'publish',
    ]);
  });

  it('answers 404 naming the namespaces for a tag move or yank in a namespace nothing was published into', async () => {
    const missing = uniqueName('nowhere');
    const res = await ctx.app.inject({
      method: 'PUT',
      url: `/namespaces/${missing}/skills/anything/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    const problem = expectProblem(res, 404);
    expect(problem.detail).toContain(`no namespace '${missing}'`);
    expect(problem.namespaces).toContain('default');
  });

  it('refuses an invalid namespace name with a 400 that gives the rule, storing nothing', async () => {
    for (const bad of ['Team', '-team', 'team--a', 'a'.repeat(65), 'team_a']) {
      const res = await post(
        ctx.app,
        `/skills?namespace=${encodeURIComponent(bad)}`,
        skillText(uniqueName('x'), 'X.'),
      );
      const problem = expectProblem(res, 400);
      expect(problem.detail).toMatch(/namespace/);
      expect(problem.detail).toMatch(/lowercase letters, digits and single hyphens/);
    }
    const prefixed = await post(ctx.app, '/namespaces/Bad/skills', skillText(uniqueName('x'), 'X.'));
    expectProblem(prefixed, 400);
    const listed = await ctx.app.inject({ url: '/namespaces' });
    expect(listed.json().items.map((item: { name: string }) => item.name)).not.toContain('Bad');
  });
});

describe('tokens limited to namespaces', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('a token confined to team-* writes in team namespaces only; elsewhere a 403 names what it may write', async () => {
    const secret = await token(ctx.app, {
      name: 'team-ci',
      scopes: ['publish'],
      namespaces: ['team-*', 'shared'],
    });
    const name = uniqueName('confined');
    const allowed = await post(ctx.app, `/skills?namespace=team-data`, skillText(name, 'T.'), bearer(secret));
    expect(allowed.statusCode, allowed.body).toBe(201);
    const exact = await post(ctx.app, `/namespaces/shared/skills`, skillText(name, 'S.'), bearer(secret));
    expect(exact.statusCode, exact.body).toBe(201);

    for (const url of [
      '/skills',
      '/skills?namespace=other',
      '/namespaces/teams/skills',
      '/namespaces/team/skills',
    ]) {
      const refused = await post(ctx.app, url, skillText(name, 'No.'), bearer(secret));
      const problem = expectProblem(refused, 403);
      expect(problem.detail).toContain("'team-*', 'shared'");
      expect(problem.namespaces).toEqual(['team-*', 'shared']);
    }
    const tag = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: bearer(secret),
      payload: { version: '1.0.0' },
    });
    expectProblem(tag, 403);
    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/namespaces/team-data/skills/${name}/versions/1.0.0`,
      headers: bearer(secret),
    });
    expect(yank.statusCode, yank.body).toBe(200);
    // Nothing reached default.
    expect((await ctx.app.inject({ url: `/skills/${name}` })).statusCode).toBe(404);
  });

  it('lists a token with its namespaces; without them a token acts everywhere', async () => {
    await token(ctx.app, { name: 'limited', scopes: ['read'], namespaces: ['data'] });
    const everywhere = await token(ctx.app, { name: 'anywhere', scopes: ['publish'] });
    const listed = await ctx.app.inject({ url: '/tokens', headers: adminAuth });
    const byName = new Map(
      listed.json().items.map((item: { name: string; namespaces: unknown }) => [item.name, item.namespaces]),
    );
    expect(byName.get('limited')).toEqual(['data']);
    expect(byName.get('anywhere')).toBeNull();
    const res = await post(
      ctx.app,
      `/skills?namespace=${uniqueName('any')}`,
      skillText(uniqueName('free'), 'F.'),
      bearer(everywhere),
    );
    expect(res.statusCode).toBe(201);
  });

  it('refuses invalid namespace patterns when a token is created', async () => {
    for (const bad of [['Data'], ['*data'], ['da*ta'], ['-*'], []]) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: adminAuth,
        payload: { name: 'bad', scopes: ['publish'], namespaces: bad },
      });
      expectProblem(res, 400);
    }
  });

  it('an admin token limited to namespaces may not manage tokens', async () => {
    const secret = await token(ctx.app, { name: 'ns-admin', scopes: ['admin'], namespaces: ['team-*'] });
    const res = await ctx.app.inject({ url: '/tokens', headers: bearer(secret) });
    const problem = expectProblem(res, 403);
    expect(problem.detail).toMatch(/not limited to namespaces/);
    const publish = await post(
      ctx.app,
      '/skills?namespace=team-x',
      skillText(uniqueName('adm'), 'A.'),
      bearer(secret),
    );
    expect(publish.statusCode).toBe(201);
  });
});

describe('tokens limited to namespaces, with SKILLREG_READ_AUTH=true', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => ctx?.close());

  it('limits reads the same way: the root API is default, outside the token it is a 403', async () => {
    const name = uniqueName('private');
    await post(ctx.app, '/skills', skillText(name, 'Org.'));
    const limited = await token(ctx.app, { name: 'reader', scopes: ['read'], namespaces: ['team-*'] });
    const open = await token(ctx.app, { name: 'reader-all', scopes: ['read'] });
    const refused = await ctx.app.inject({ url: `/skills/${name}`, headers: bearer(limited) });
    const problem = expectProblem(refused, 403);
    expect(problem.detail).toMatch(/may read only in the namespaces 'team-\*'/);
    expect((await ctx.app.inject({ url: `/skills/${name}`, headers: bearer(open) })).statusCode).toBe(200);
    // Which namespaces exist is listed to any reader.
    expect((await ctx.app.inject({ url: '/namespaces', headers: bearer(limited) })).statusCode).toBe(200);
  });
});

describe('seeds in a namespace of their own (SKILLREG_SEED_NAMESPACE)', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({
      SKILLREG_SEED_DIR: new URL('../../skills-seed', import.meta.url).pathname,
      SKILLREG_SEED_NAMESPACE: 'bundled',
    });
  });
  afterAll(async () => ctx?.close());

  it('loads the bundled skills there, so a view can put them under every other layer', async () => {
    const bundled = await ctx.app.inject({ url: '/namespaces/bundled/skills' });
    expect(bundled.statusCode).toBe(200);
    const names = bundled.json().items.map((item: { name: string }) => item.name);
    expect(names.length).toBeGreaterThan(0);
    expect((await ctx.app.inject({ url: '/skills' })).json().items).toEqual([]);
    const team = uniqueName('team');
    await post(
      ctx.app,
      `/skills?namespace=${team}`,
      skillText(names[0], 'The team overrides a bundled skill.'),
    );
    const view = await ctx.app.inject({
      method: 'PUT',
      url: '/views/agents',
      headers: adminAuth,
      payload: { layers: ['bundled', team] },
    });
    expect(view.statusCode, view.body).toBe(201);
    const page = (await ctx.app.inject({ url: '/views/agents/skills' })).json().items as {
      name: string;
      namespace: string;
    }[];
    expect(page.find((item) => item.name === names[0])?.namespace).toBe(team);
    expect(page.filter((item) => item.namespace === 'bundled')).toHaveLength(names.length - 1);
  });
});

describe('deleting a namespace', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('removes it with its skills (reads 404, search forgets them); publishing again starts afresh', async () => {
    const ns = uniqueName('gone');
    const name = uniqueName('doomed');
    await post(ctx.app, `/skills?namespace=${ns}`, skillText(name, 'Quokkaflux doomed skill.'));
    await post(ctx.app, `/skills?namespace=${ns}`, skillText(name, 'Quokkaflux doomed skill, v2.'));
    expect(
      (await ctx.app.inject({ url: `/namespaces/${ns}/search?q=quokkaflux` })).json().results,
    ).toHaveLength(1);
    expect(
      (await ctx.app.inject({ url: `/namespaces/${ns}/prompt?format=json` })).json().included,
    ).toHaveLength(1);

    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/namespaces/${ns}`, headers: adminAuth });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ namespace: ns, deleted: { skills: 1, versions: 2 } });
    for (const path of ['skills', `skills/${name}/content`, 'search?q=quokkaflux', 'prompt']) {
      expect((await ctx.app.inject({ url: `/namespaces/${ns}/${path}` })).statusCode, path).toBe(404);
    }
    const listed = (await ctx.app.inject({ url: '/namespaces' }))
      .json()
      .items.map((item: { name: string }) => item.name);
    expect(listed).not.toContain(ns);

    await post(ctx.app, `/skills?namespace=${ns}`, skillText(uniqueName('fresh'), 'A fresh start.'));
    const again = await ctx.app.inject({ url: `/namespaces/${ns}/skills` });
    expect(again.json().items.map((item: { name: string }) => item.name)).not.toContain(name);
    expect((await ctx.app.inject({ url: `/namespaces/${ns}/search?q=quokkaflux` })).json().results).toEqual(
      [],
    );
    expect(
      (await ctx.app.inject({ url: `/namespaces/${ns}/prompt?format=json` })).json().included,
    ).toHaveLength(1);
    const audit = await ctx.app.inject({
      url: `/audit?action=namespace.delete&namespace=${ns}`,
      headers: adminAuth,
    });
    expect(audit.json().items).toHaveLength(1);
  });

  it('refuses default (400), a namespace a view uses (409 naming it), an unknown one (404) and a limited token (403)', async () => {
    expectProblem(
      await ctx.app.inject({ method: 'DELETE', url: '/namespaces/default', headers: adminAuth }),
      400,
    );
    const ns = uniqueName('layer');
    await post(ctx.app, `/skills?namespace=${ns}`, skillText(uniqueName('kept'), 'Kept.'));
    const view = uniqueName('holder');
    await ctx.app.inject({
      method: 'PUT',
      url: `/views/${view}`,
      headers: adminAuth,
      payload: { layers: [ns] },
    });
    const used = expectProblem(
      await ctx.app.inject({ method: 'DELETE', url: `/namespaces/${ns}`, headers: adminAuth }),
      409,
    );
    expect(used.views).toEqual([view]);
    expect((await ctx.app.inject({ url: `/namespaces/${ns}/skills` })).json().items).toHaveLength(1);
    expectProblem(
      await ctx.app.inject({
        method: 'DELETE',
        url: `/namespaces/${uniqueName('nope')}`,
        headers: adminAuth,
      }),
      404,
    );
    const limited = await token(ctx.app, { name: 'ns-admin', scopes: ['admin'], namespaces: [ns] });
    expectProblem(
      await ctx.app.inject({ method: 'DELETE', url: `/namespaces/${ns}`, headers: bearer(limited) }),
      403,
    );
    // Out of the view, it can go.
    await ctx.app.inject({ method: 'DELETE', url: `/views/${view}`, headers: adminAuth });
    expect(
      (await ctx.app.inject({ method: 'DELETE', url: `/namespaces/${ns}`, headers: adminAuth })).statusCode,
    ).toBe(200);
  });
});
