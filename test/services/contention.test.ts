import type { LightMyRequestResponse } from 'fastify';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

// Many writers on one skill at once: publishes are serialised per skill (an advisory lock inside the
// transaction), so versions are distinct and none is lost, identical content is stored once, and tag
// moves and yanks racing with publishes leave `latest` on the highest live version. On PostgreSQL the
// writers really run in parallel on a pool smaller than the number of writers.

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

interface AuditItem {
  id: number;
  actor: string;
  action: string;
  skill: string | null;
  version: string | null;
  detail: Record<string, unknown>;
}

interface VersionEntry {
  version: string;
  yanked: boolean;
  tags: string[];
}

const bundleOf = (name: string, body: string) =>
  files({ 'SKILL.md': skillMd({ name, description: 'Published by one of many writers.', body }) });

async function auditOf(name: string): Promise<AuditItem[]> {
  const items: AuditItem[] = [];
  let before: number | undefined;
  for (;;) {
    const res = await ctx.app.inject({
      url: `/audit?limit=500${before === undefined ? '' : `&before=${before}`}`,
      headers: adminAuth,
    });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json().items as AuditItem[];
    items.push(...page.filter((item) => item.skill === name));
    if (page.length < 500) return items;
    before = page.at(-1)!.id;
  }
}

async function versionsOf(name: string): Promise<VersionEntry[]> {
  const res = await ctx.app.inject(`/skills/${name}/versions`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function statuses(answers: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of answers) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1;
  return counts;
}

describe('concurrent publishes of one skill', () => {
  it('40 different publishes at once: 40 distinct versions 1.0.0..1.0.39, none lost, 40 audit rows', async () => {
    const name = uniqueName('crowd');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => publish(ctx.app, bundleOf(name, `Writer ${i} was here.\n`))),
    );
    expect(statuses(answers)).toEqual({ 201: 40 });
    const expected = Array.from({ length: 40 }, (_, i) => `1.0.${i}`);
    const answered = answers.map((res) => res.json().version as string);
    expect([...answered].sort(semver.compare)).toEqual(expected);

    // Each answer names the version holding exactly that writer's content.
    const digests = new Map(
      answers.map((res) => [res.json().version as string, res.json().digest as string]),
    );
    expect(new Set(digests.values()).size).toBe(40);
    const stored = await versionsOf(name);
    expect(stored.map((entry) => entry.version)).toEqual([...expected].reverse());
    for (const [index, res] of answers.entries()) {
      const content = await ctx.app.inject(`/skills/${name}/content?version=${res.json().version}`);
      expect(content.body).toContain(`Writer ${index} was here.`);
    }
    expect(stored[0]!.tags).toEqual(['latest']);
    expect((await ctx.app.inject(`/skills/${name}`)).json().version).toBe('1.0.39');

    const audit = await auditOf(name);
    const publishes = audit.filter((item) => item.action === 'publish');
    expect(publishes).toHaveLength(40);
    expect(publishes.map((item) => item.version!).sort(semver.compare)).toEqual(expected);
    for (const item of publishes) {
      expect(item.actor).toBe('admin-token');
      expect(item.detail.digest).toBe(digests.get(item.version!));
    }
  });

  it('20 identical publishes at once: exactly one 201, nineteen 200 naming the same version, one audit row', async () => {
    const name = uniqueName('twins');
    const bundle = bundleOf(name, 'Everyone sends the same bytes.\n');
    const answers = await Promise.all(Array.from({ length: 20 }, () => publish(ctx.app, bundle)));
    expect(statuses(answers)).toEqual({ 200: 19, 201: 1 });
    for (const res of answers) expect(res.json()).toMatchObject({ name, version: '1.0.0' });
    expect(new Set(answers.map((res) => res.json().digest)).size).toBe(1);
    expect((await versionsOf(name)).map((entry) => entry.version)).toEqual(['1.0.0']);
    expect((await auditOf(name)).map((item) => item.action)).toEqual(['publish']);
  });

  it('the same explicit version with different content at once: one 201, the rest 409, one version', async () => {
    const name = uniqueName('claim');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        publish(ctx.app, bundleOf(name, `Claimant ${i}.\n`), { query: 'version=2.0.0' }),
      ),
    );
    expect(statuses(answers)).toEqual({ 201: 1, 409: 11 });
    const winner = answers.find((res) => res.statusCode === 201)!.json();
    for (const res of answers.filter((answer) => answer.statusCode === 409)) {
      expect(res.json()).toMatchObject({ version: '2.0.0', existingDigest: winner.digest });
    }
    expect((await versionsOf(name)).map((entry) => entry.version)).toEqual(['2.0.0']);
    expect((await auditOf(name)).filter((item) => item.action === 'publish')).toHaveLength(1);
  });

  it('publishes of many skills at once: each skill gets its own versions', async () => {
    const names = Array.from({ length: 15 }, () => uniqueName('fanout'));
    const answers = await Promise.all(
      names.flatMap((name) => [0, 1].map((i) => publish(ctx.app, bundleOf(name, `Take ${i}.\n`)))),
    );
    expect(statuses(answers)).toEqual({ 201: 30 });
    for (const name of names) {
      expect((await versionsOf(name)).map((entry) => entry.version)).toEqual(['1.0.1', '1.0.0']);
    }
  });
});

describe('tag moves and yanks racing with publishes', () => {
  it('leave latest on the highest live version, no tag on a yanked version, and an audit row per change', async () => {
    const name = uniqueName('melee');
    for (let i = 0; i < 10; i += 1) {
      expect((await publish(ctx.app, bundleOf(name, `Base ${i}.\n`))).statusCode).toBe(201);
    }
    // 1.0.0..1.0.9 exist. Now, all at once: ten more publishes (1.0.10..1.0.19), yanks of old and of
    // not-yet-published versions, and tag moves onto versions that may be yanked under them.
    const publishes = Array.from({ length: 10 }, (_, i) => publish(ctx.app, bundleOf(name, `Late ${i}.\n`)));
    const yankTargets = ['1.0.3', '1.0.5', '1.0.9', '1.0.12', '1.0.15', '1.0.19', '1.0.5'];
    const yanks = yankTargets.map((version) =>
      ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/${version}`, headers: adminAuth }),
    );
    const tagMoves = ['1.0.1', '1.0.3', '1.0.5', '1.0.8', '1.0.9', '1.0.11', '1.0.2', '1.0.12'].map(
      (version, i) =>
        ctx.app.inject({
          method: 'PUT',
          url: `/skills/${name}/tags/${i % 2 === 0 ? 'stable' : 'beta'}`,
          headers: adminAuth,
          payload: { version },
        }),
    );
    const [published, yanked, moved] = await Promise.all([
      Promise.all(publishes),
      Promise.all(yanks),
      Promise.all(tagMoves),
    ]);

    expect(statuses(published)).toEqual({ 201: 10 });
    expect(published.map((res) => res.json().version as string).sort(semver.compare)).toEqual(
      Array.from({ length: 10 }, (_, i) => `1.0.${i + 10}`),
    );
    // A yank answers 200, or 404 when its version did not exist yet; a tag move 200, or 409 when its
    // version was yanked first, or 404 when it did not exist yet. Never a 5xx, never a deadlock.
    for (const res of yanked) expect([200, 404], res.body).toContain(res.statusCode);
    for (const res of moved) expect([200, 404, 409], res.body).toContain(res.statusCode);

    const versions = await versionsOf(name);
    const live = versions.filter((entry) => !entry.yanked).map((entry) => entry.version);
    const yankedNow = new Set(versions.filter((entry) => entry.yanked).map((entry) => entry.version));
    expect(versions).toHaveLength(20);
    // Every 200 yank is reflected; old versions always existed, so their yanks succeeded.
    for (const [index, res] of yanked.entries()) {
      if (res.statusCode === 200) expect(yankedNow.has(yankTargets[index]!)).toBe(true);
    }
    for (const version of ['1.0.3', '1.0.5', '1.0.9']) expect(yankedNow.has(version)).toBe(true);
    expect(yanked.filter((res) => res.statusCode === 200 && res.json().alreadyYanked === false)).toHaveLength(
      yankedNow.size,
    );

    // latest is the highest live version, the same through every read.
    const highestLive = [...live].sort(semver.rcompare)[0]!;
    const tagged = (tag: string) => versions.find((entry) => entry.tags.includes(tag))?.version;
    expect(tagged('latest')).toBe(highestLive);
    expect((await ctx.app.inject(`/skills/${name}`)).json().version).toBe(highestLive);
    const catalogue = (await ctx.app.inject(`/skills?q=${name}`)).json().items as {
      name: string;
      version: string;
    }[];
    expect(catalogue.find((item) => item.name === name)?.version).toBe(highestLive);
    // No tag rests on a yanked version.
    for (const entry of versions) if (entry.yanked) expect(entry.tags, entry.version).toEqual([]);
    // A 409 tag move targeted a version that is yanked now.
    for (const res of moved.filter((answer) => answer.statusCode === 409)) {
      expect(yankedNow.has(res.json().version)).toBe(true);
    }

    // The audit log holds exactly one row per change that happened.
    const audit = await auditOf(name);
    const count = (action: string) => audit.filter((item) => item.action === action).length;
    expect(count('publish')).toBe(20);
    expect(count('yank')).toBe(yankedNow.size);
    expect(count('tag')).toBe(moved.filter((res) => res.statusCode === 200).length);
    expect(
      audit
        .filter((item) => item.action === 'yank')
        .map((item) => item.version)
        .sort(),
    ).toEqual([...yankedNow].sort());
  });
});
