import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const PROBLEM_JSON = /^application\/problem\+json/;

interface VersionSummary {
  version: string;
  digest: string;
  createdAt: string;
  yanked: boolean;
  tags: string[];
}

const variant = (name: string, label: string) =>
  files({ 'SKILL.md': skillMd({ name, description: `Variant ${label}.`, body: `Body of ${label}.\n` }) });

async function publishAs(name: string, version: string | undefined, label = version ?? 'auto', tag?: string) {
  const query = [version ? `version=${version}` : '', tag ? `tag=${tag}` : ''].filter(Boolean).join('&');
  const res = await publish(ctx.app, variant(name, label), { query });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { version: string; digest: string };
}

async function versionsOf(name: string): Promise<VersionSummary[]> {
  const res = await ctx.app.inject(`/skills/${name}/versions`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function moveTag(name: string, tag: string, version: string) {
  return ctx.app.inject({
    method: 'PUT',
    url: `/skills/${name}/tags/${tag}`,
    headers: adminAuth,
    payload: { version },
  });
}

function yank(name: string, version: string) {
  return ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/${version}`, headers: adminAuth });
}

async function latestVersion(name: string): Promise<string> {
  const res = await ctx.app.inject(`/skills/${name}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().version;
}

async function catalogueEntry(name: string) {
  const res = await ctx.app.inject('/skills?limit=500');
  return (res.json().items as { name: string; version: string }[]).find((item) => item.name === name);
}

describe('GET /skills/{name}/versions', () => {
  it('lists versions newest first by semver, not by publish order or string order', async () => {
    const name = uniqueName('order');
    const a = await publishAs(name, '1.0.0');
    const b = await publishAs(name, '1.10.0');
    const c = await publishAs(name, '1.2.0');
    const versions = await versionsOf(name);
    expect(versions).toEqual([
      { version: '1.10.0', digest: b.digest, createdAt: expect.any(String), yanked: false, tags: ['latest'] },
      { version: '1.2.0', digest: c.digest, createdAt: expect.any(String), yanked: false, tags: [] },
      { version: '1.0.0', digest: a.digest, createdAt: expect.any(String), yanked: false, tags: [] },
    ]);
    for (const entry of versions) expect(Number.isNaN(Date.parse(entry.createdAt))).toBe(false);
  });

  it('orders pre-releases below their release and shows yanked flags and every tag', async () => {
    const name = uniqueName('order-pre');
    await publishAs(name, '2.0.0-beta.1');
    await publishAs(name, '2.0.0-beta.10');
    await publishAs(name, '2.0.0-beta.2', undefined, 'beta');
    await publishAs(name, '2.0.0');
    await publishAs(name, '1.9.9');
    expect((await moveTag(name, 'stable', '1.9.9')).statusCode).toBe(200);
    expect((await yank(name, '2.0.0-beta.1')).statusCode).toBe(200);
    expect(await versionsOf(name)).toEqual([
      expect.objectContaining({ version: '2.0.0', yanked: false, tags: ['latest'] }),
      expect.objectContaining({ version: '2.0.0-beta.10', yanked: false, tags: [] }),
      expect.objectContaining({ version: '2.0.0-beta.2', yanked: false, tags: ['beta'] }),
      expect.objectContaining({ version: '2.0.0-beta.1', yanked: true, tags: [] }),
      expect.objectContaining({ version: '1.9.9', yanked: false, tags: ['stable'] }),
    ]);
  });

  it('answers 404 problem for an unknown skill', async () => {
    const res = await ctx.app.inject(`/skills/${uniqueName('nope')}/versions`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
  });
});

describe('PUT /skills/{name}/tags/{tag}', () => {
  it('creates and moves a tag; reads with ?tag= follow it', async () => {
    const name = uniqueName('tags');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0');
    await publishAs(name, '1.2.0');

    const created = await moveTag(name, 'stable', '1.0.0');
    expect(created.statusCode).toBe(200);
    expect(created.json()).toEqual({ name, tag: 'stable', version: '1.0.0', previous: null });
    expect((await ctx.app.inject(`/skills/${name}?tag=stable`)).json().version).toBe('1.0.0');
    const content = await ctx.app.inject(`/skills/${name}/content?tag=stable`);
    expect(content.body).toBe('Body of 1.0.0.\n');

    const moved = await moveTag(name, 'stable', '1.1.0');
    expect(moved.json()).toEqual({ name, tag: 'stable', version: '1.1.0', previous: '1.0.0' });
    expect((await ctx.app.inject(`/skills/${name}?tag=stable`)).json().version).toBe('1.1.0');
    expect((await ctx.app.inject(`/skills/${name}/content?tag=stable`)).body).toBe('Body of 1.1.0.\n');
    expect((await ctx.app.inject(`/skills/${name}/files/SKILL.md?tag=stable`)).body).toContain(
      'Variant 1.1.0.',
    );

    const meta = (await ctx.app.inject(`/skills/${name}`)).json();
    expect(meta.distTags).toEqual({ latest: '1.2.0', stable: '1.1.0' });
    const tagged = (await versionsOf(name)).find((entry) => entry.version === '1.1.0');
    expect(tagged!.tags).toEqual(['stable']);
    // The catalogue filtered by the tag lists the tagged version.
    const listed = (await ctx.app.inject('/skills?tag=stable&limit=500')).json().items as {
      name: string;
      version: string;
    }[];
    expect(listed.find((item) => item.name === name)!.version).toBe('1.1.0');
  });

  it.each(['1.0.0', 'Bad%20Tag', 'UPPER', '-leading', 'v1.2.3'])(
    'refuses the tag name %s with 400',
    async (tag) => {
      const name = uniqueName('badtag');
      await publishAs(name, '1.0.0');
      const res = await moveTag(name, tag, '1.0.0');
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.json().detail).toMatch(/tag/);
      expect((await ctx.app.inject(`/skills/${name}`)).json().distTags).toEqual({ latest: '1.0.0' });
    },
  );

  it('answers 404 for an unknown version or skill, 400 for a missing body', async () => {
    const name = uniqueName('tag404');
    await publishAs(name, '1.0.0');
    const unknownVersion = await moveTag(name, 'stable', '9.9.9');
    expect(unknownVersion.statusCode).toBe(404);
    expect(unknownVersion.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(unknownVersion.json().detail).toContain('1.0.0');
    const unknownSkill = await moveTag(uniqueName('ghost'), 'stable', '1.0.0');
    expect(unknownSkill.statusCode).toBe(404);
    const noBody = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: {},
    });
    expect(noBody.statusCode).toBe(400);
    expect((await ctx.app.inject(`/skills/${name}`)).json().distTags).toEqual({ latest: '1.0.0' });
  });

  it('refuses to put a tag on a yanked version with 409', async () => {
    const name = uniqueName('tag409');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0');
    expect((await yank(name, '1.0.0')).statusCode).toBe(200);
    const res = await moveTag(name, 'stable', '1.0.0');
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.json().detail).toContain('yanked');
    expect((await moveTag(name, 'latest', '1.0.0')).statusCode).toBe(409);
    expect(await latestVersion(name)).toBe('1.1.0');
  });

  it('moving latest by hand pins it: a later higher publish does not move it', async () => {
    const name = uniqueName('pin');
    await publishAs(name, '1.0.0');
    await publishAs(name, '2.0.0');
    expect(await latestVersion(name)).toBe('2.0.0');
    const pinned = await moveTag(name, 'latest', '1.0.0');
    expect(pinned.json()).toMatchObject({ version: '1.0.0', previous: '2.0.0' });
    expect(await latestVersion(name)).toBe('1.0.0');
    await publishAs(name, '3.0.0');
    await publishAs(name, undefined, 'auto');
    expect(await latestVersion(name)).toBe('1.0.0');
    expect((await catalogueEntry(name))!.version).toBe('1.0.0');
    expect((await versionsOf(name)).map((entry) => entry.version)).toEqual([
      '3.0.1',
      '3.0.0',
      '2.0.0',
      '1.0.0',
    ]);
  });
});

describe('DELETE /skills/{name}/versions/{version} (yank)', () => {
  it('hides the version from latest and the catalogue, keeps it readable by exact version', async () => {
    const name = uniqueName('yank');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0');
    await publishAs(name, '1.2.0');
    expect((await catalogueEntry(name))!.version).toBe('1.2.0');

    const res = await yank(name, '1.2.0');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name,
      version: '1.2.0',
      yanked: true,
      alreadyYanked: false,
      latest: '1.1.0',
    });

    expect(await latestVersion(name)).toBe('1.1.0');
    expect((await catalogueEntry(name))!.version).toBe('1.1.0');
    expect((await ctx.app.inject(`/skills/${name}/content`)).body).toBe('Body of 1.1.0.\n');

    const exact = await ctx.app.inject(`/skills/${name}?version=1.2.0`);
    expect(exact.statusCode).toBe(200);
    expect(exact.json()).toMatchObject({ version: '1.2.0', yanked: true });
    expect((await ctx.app.inject(`/skills/${name}/content?version=1.2.0`)).body).toBe('Body of 1.2.0.\n');
    expect((await ctx.app.inject(`/skills/${name}/bundle?version=1.2.0`)).statusCode).toBe(200);
    expect((await ctx.app.inject(`/skills/${name}/files/SKILL.md?version=1.2.0`)).statusCode).toBe(200);

    const versions = await versionsOf(name);
    expect(versions.map((entry) => [entry.version, entry.yanked, entry.tags])).toEqual([
      ['1.2.0', true, []],
      ['1.1.0', false, ['latest']],
      ['1.0.0', false, []],
    ]);
  });

  it('removes other tags from the yanked version', async () => {
    const name = uniqueName('yank-tags');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0', undefined, 'beta');
    await yank(name, '1.1.0');
    const tagged = await ctx.app.inject(`/skills/${name}?tag=beta`);
    expect(tagged.statusCode).toBe(404);
    expect((await ctx.app.inject(`/skills/${name}`)).json().distTags).toEqual({ latest: '1.0.0' });
  });

  it('a second yank is idempotent', async () => {
    const name = uniqueName('yank-twice');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0');
    expect((await yank(name, '1.1.0')).json().alreadyYanked).toBe(false);
    const etag = (await ctx.app.inject(`/skills/${name}/versions`)).headers.etag;
    const again = await yank(name, '1.1.0');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({
      name,
      version: '1.1.0',
      yanked: true,
      alreadyYanked: true,
      latest: '1.0.0',
    });
    expect(await latestVersion(name)).toBe('1.0.0');
    expect((await versionsOf(name)).filter((entry) => entry.yanked)).toHaveLength(1);
    expect((await ctx.app.inject(`/skills/${name}/versions`)).headers.etag).toBe(etag);
  });

  it('answers 404 for an unknown version or skill', async () => {
    const name = uniqueName('yank404');
    await publishAs(name, '1.0.0');
    const res = await yank(name, '2.0.0');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.json().detail).toContain('1.0.0');
    expect((await yank(uniqueName('ghost'), '1.0.0')).statusCode).toBe(404);
  });

  it('yanking every version makes the skill 404 with a clear detail, exact versions still work', async () => {
    const name = uniqueName('yank-all');
    await publishAs(name, '1.0.0');
    await publishAs(name, '1.1.0');
    await yank(name, '1.1.0');
    const last = await yank(name, '1.0.0');
    expect(last.json()).toMatchObject({ alreadyYanked: false, latest: null });

    for (const path of ['', '/content', '/bundle', '/files/SKILL.md']) {
      const res = await ctx.app.inject(`/skills/${name}${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.json().detail, path).toContain('yanked');
    }
    expect(await catalogueEntry(name)).toBeUndefined();
    const exact = await ctx.app.inject(`/skills/${name}?version=1.0.0`);
    expect(exact.statusCode).toBe(200);
    expect(exact.json()).toMatchObject({ version: '1.0.0', yanked: true, distTags: {} });
    expect((await ctx.app.inject(`/skills/${name}/content?version=1.1.0`)).body).toBe('Body of 1.1.0.\n');
    expect((await versionsOf(name)).every((entry) => entry.yanked)).toBe(true);

    // A new publish brings the skill back, after the highest version ever published.
    const next = await publishAs(name, undefined, 'revived');
    expect(next.version).toBe('1.1.1');
    expect(await latestVersion(name)).toBe('1.1.1');
  });

  it('republishing the identical content of a yanked version does not resurrect it', async () => {
    const name = uniqueName('no-resurrect');
    await publishAs(name, '1.0.0', 'one');
    const two = await publishAs(name, '1.1.0', 'two');
    await yank(name, '1.1.0');

    for (const query of ['', 'version=1.1.0']) {
      const res = await publish(ctx.app, variant(name, 'two'), { query });
      expect(res.statusCode, query).toBe(200);
      expect(res.json()).toMatchObject({ version: '1.1.0', digest: two.digest, created: false });
      expect((res.json().warnings as { detail: string }[]).some((w) => w.detail.includes('yanked'))).toBe(
        true,
      );
    }
    expect(await latestVersion(name)).toBe('1.0.0');
    expect((await catalogueEntry(name))!.version).toBe('1.0.0');
    expect((await versionsOf(name)).map((entry) => [entry.version, entry.yanked])).toEqual([
      ['1.1.0', true],
      ['1.0.0', false],
    ]);
  });

  it('yanking a hand-pinned latest lets latest follow the highest remaining version again', async () => {
    const name = uniqueName('yank-pinned');
    await publishAs(name, '1.0.0');
    await publishAs(name, '2.0.0');
    await publishAs(name, '3.0.0');
    await moveTag(name, 'latest', '2.0.0');
    expect((await yank(name, '2.0.0')).json().latest).toBe('3.0.0');
    expect(await latestVersion(name)).toBe('3.0.0');
  });
});

describe('pre-releases and latest', () => {
  it('a pre-release does not become latest while a release exists', async () => {
    const name = uniqueName('prerelease');
    await publishAs(name, '1.0.0');
    const beta = await publish(ctx.app, variant(name, 'beta'), { query: 'version=2.0.0-beta.1' });
    expect(beta.statusCode).toBe(201);
    expect(await latestVersion(name)).toBe('1.0.0');
    expect((await catalogueEntry(name))!.version).toBe('1.0.0');
    expect((await ctx.app.inject(`/skills/${name}?version=2.0.0-beta.1`)).statusCode).toBe(200);
    // Through metadata.version too.
    const rc = await publish(
      ctx.app,
      files({
        'SKILL.md': skillMd({ name, description: 'RC.', extra: 'metadata:\n  version: "2.0.0-rc.1"' }),
      }),
    );
    expect(rc.json()).toMatchObject({ version: '2.0.0-rc.1', created: true });
    expect(await latestVersion(name)).toBe('1.0.0');
    // The release it leads to does.
    await publishAs(name, '2.0.0');
    expect(await latestVersion(name)).toBe('2.0.0');
  });

  it('a skill with only pre-releases has its highest pre-release as latest', async () => {
    const name = uniqueName('only-pre');
    await publishAs(name, '0.1.0-alpha.1');
    await publishAs(name, '0.1.0-alpha.2');
    expect(await latestVersion(name)).toBe('0.1.0-alpha.2');
    await publishAs(name, '0.0.9');
    expect(await latestVersion(name)).toBe('0.0.9');
  });
});
