import { describe, expect, it } from 'vitest';
import type { BundleFile } from '../../src/bundle/types.js';
import { files, labelledSkill, skillMd, uniqueName } from '../helpers/bundles.js';
import { publishFiles, refusal, registryPerFile, TEST_ACTOR } from '../helpers/registry.js';

// The rules of every write to a skill (SkillWriteService, src/services/skill-writes.ts) through the
// registry's services on a real database: version choice, identical content, conflicts, refusals,
// namespaces, dist-tags and yanks. No app, no HTTP.

const ctx = registryPerFile();

const variant = (name: string, label: string, extra?: string) => labelledSkill(name, label, { extra });

/** What is stored of a skill in a namespace: every version row (quarantined too) and the dist-tags. */
async function stored(name: string, namespace = 'default') {
  const skills = ctx.registry.repositories.skills;
  const skillId = await skills.idOf(name, namespace);
  if (skillId === undefined) return undefined;
  const rows = await skills.versionRows(skillId);
  return {
    versions: rows.map((row) => row.version).sort(),
    yanked: rows.filter((row) => row.yankedAt !== null).map((row) => row.version),
    tags: await skills.distTags(skillId),
  };
}

async function auditOf(name: string) {
  const { items } = await ctx.registry.repositories.audit.list({ limit: 100, skill: name });
  return items.map((item) => ({ action: item.action, version: item.version, actor: item.actor }));
}

describe('publishing a new version', () => {
  it('stores the first version as 1.0.0 under latest, audited with the actor', async () => {
    const name = uniqueName('first');
    const result = await publishFiles(ctx.registry, variant(name, 'one'));
    expect(result).toMatchObject({ name, version: '1.0.0', created: true, warnings: [] });
    expect(result.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await stored(name)).toEqual({ versions: ['1.0.0'], yanked: [], tags: { latest: '1.0.0' } });
    expect(await auditOf(name)).toEqual([{ action: 'publish', version: '1.0.0', actor: TEST_ACTOR }]);
  });

  it('picks ?version= over metadata.version over the next patch after the highest version ever stored', async () => {
    const name = uniqueName('sources');
    expect((await publishFiles(ctx.registry, variant(name, 'a'))).version).toBe('1.0.0');
    expect(
      (await publishFiles(ctx.registry, variant(name, 'b', 'metadata:\n  version: 1.4.0'))).version,
    ).toBe('1.4.0');
    expect(
      (
        await publishFiles(ctx.registry, variant(name, 'c', 'metadata:\n  version: 1.9.0'), {
          version: '2.0.0',
        })
      ).version,
    ).toBe('2.0.0');
    // A yanked version still counts: versions are never reused.
    await ctx.registry.writes.yank(name, '2.0.0', TEST_ACTOR);
    const next = await publishFiles(ctx.registry, variant(name, 'd'));
    expect(next.version).toBe('2.0.1');
    expect(await stored(name)).toMatchObject({ tags: { latest: '2.0.1' } });
  });

  it("coerces metadata.version '1.0' to 1.0.0 with a warning naming the fix", async () => {
    const name = uniqueName('coerced');
    const result = await publishFiles(ctx.registry, variant(name, 'a', "metadata:\n  version: '1.0'"));
    expect(result.version).toBe('1.0.0');
    expect(result.warnings).toEqual([
      expect.objectContaining({
        path: 'SKILL.md#metadata.version',
        detail: expect.stringContaining("'1.0.0'"),
      }),
    ]);
  });

  it('points ?tag= at the new version (pinned: a later publish leaves it), besides latest', async () => {
    const name = uniqueName('tag-on-publish');
    await publishFiles(ctx.registry, variant(name, 'a'), { tag: 'stable' });
    await publishFiles(ctx.registry, variant(name, 'b'));
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.1', stable: '1.0.0' });
    expect((await auditOf(name)).map((entry) => `${entry.action} ${entry.version}`).sort()).toEqual([
      'publish 1.0.0',
      'publish 1.0.1',
      'tag 1.0.0',
    ]);
  });
});

describe('identical content', () => {
  it('answers the version it was published as, created false, storing and announcing nothing', async () => {
    const name = uniqueName('idempotent');
    const bundle = variant(name, 'same');
    const first = await publishFiles(ctx.registry, bundle);
    const revision = await ctx.registry.reads.revision();
    const again = await publishFiles(ctx.registry, variant(name, 'same'));
    expect(again).toMatchObject({ name, version: '1.0.0', digest: first.digest, created: false });
    expect(await stored(name)).toEqual({ versions: ['1.0.0'], yanked: [], tags: { latest: '1.0.0' } });
    expect(await auditOf(name)).toHaveLength(1);
    // Readers' ETags follow the revision: an unchanged publish must leave it.
    expect(await ctx.registry.reads.revision()).toBe(revision);
  });

  it('is recognised by content, not file order, and answers the newest live version holding it', async () => {
    const name = uniqueName('by-content');
    const skill = skillMd({ name, description: 'Two files.', body: '# two\n' });
    const forward = files({ 'SKILL.md': skill, 'references/a.md': 'A\n' });
    const backward = files({ 'references/a.md': 'A\n', 'SKILL.md': skill });
    await publishFiles(ctx.registry, forward);
    // The same files re-released on purpose under a new number: an explicit version counts.
    const rereleased = await publishFiles(ctx.registry, forward, { version: '1.1.0' });
    expect(rereleased).toMatchObject({ version: '1.1.0', created: true });
    expect(await publishFiles(ctx.registry, backward)).toMatchObject({ version: '1.1.0', created: false });
    // An explicit version holding the same content answers that version.
    expect(await publishFiles(ctx.registry, forward, { version: '1.0.0' })).toMatchObject({
      version: '1.0.0',
      created: false,
    });
    expect((await stored(name))?.versions).toEqual(['1.0.0', '1.1.0']);
  });

  it('moves a ?tag= onto the existing version', async () => {
    const name = uniqueName('idempotent-tag');
    await publishFiles(ctx.registry, variant(name, 'a'));
    await publishFiles(ctx.registry, variant(name, 'b'));
    const again = await publishFiles(ctx.registry, variant(name, 'a'), { tag: 'stable' });
    expect(again).toMatchObject({ version: '1.0.0', created: false });
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.1', stable: '1.0.0' });
  });

  it('of a yanked version does not resurrect it, and says so', async () => {
    const name = uniqueName('yanked-again');
    await publishFiles(ctx.registry, variant(name, 'a'));
    await publishFiles(ctx.registry, variant(name, 'b'));
    await ctx.registry.writes.yank(name, '1.0.1', TEST_ACTOR);
    const again = await publishFiles(ctx.registry, variant(name, 'b'), { tag: 'stable' });
    expect(again).toMatchObject({ version: '1.0.1', created: false });
    expect(again.warnings).toEqual([
      expect.objectContaining({ detail: expect.stringContaining('identical to yanked version 1.0.1') }),
    ]);
    // Still yanked, latest where it was, and no tag put on the yanked version.
    expect(await stored(name)).toEqual({
      versions: ['1.0.0', '1.0.1'],
      yanked: ['1.0.1'],
      tags: { latest: '1.0.0' },
    });
  });
});

describe('conflicts', () => {
  it('different content under an existing version is a 409 naming both digests, changing nothing', async () => {
    const name = uniqueName('conflict');
    const first = await publishFiles(ctx.registry, variant(name, 'a'));
    const revision = await ctx.registry.reads.revision();
    const conflict = await refusal(publishFiles(ctx.registry, variant(name, 'b'), { version: '1.0.0' }));
    expect(conflict).toMatchObject({
      status: 409,
      extensions: { name, version: '1.0.0', existingDigest: first.digest },
    });
    expect(conflict.message).toContain('versions are immutable');
    expect(conflict.extensions).toMatchObject({ digest: expect.not.stringMatching(first.digest) });
    expect(await stored(name)).toEqual({ versions: ['1.0.0'], yanked: [], tags: { latest: '1.0.0' } });
    expect(
      (await ctx.registry.reads.resolve({ kind: 'namespace', namespace: 'default' }, name)).record.digest,
    ).toBe(first.digest);
    expect(await auditOf(name)).toHaveLength(1);
    expect(await ctx.registry.reads.revision()).toBe(revision);
  });

  it('metadata.version naming an existing version with other content is a 409 too', async () => {
    const name = uniqueName('metadata-conflict');
    await publishFiles(ctx.registry, variant(name, 'a', 'metadata:\n  version: 3.0.0'));
    const conflict = await refusal(
      publishFiles(ctx.registry, variant(name, 'b', 'metadata:\n  version: 3.0.0')),
    );
    expect(conflict).toMatchObject({ status: 409, extensions: { version: '3.0.0' } });
  });
});

describe('invalid bundles are refused before anything is stored', () => {
  const invalid: [string, (name: string) => BundleFile[], number, RegExp][] = [
    ['no SKILL.md', () => files({ 'README.md': '# hi\n' }), 422, /SKILL\.md/],
    [
      'an invalid name',
      (name) => files({ 'SKILL.md': skillMd({ name: `${name}_Bad`, description: 'Bad name.' }) }),
      422,
      /name/,
    ],
    [
      'a description over 1024 characters',
      (name) => files({ 'SKILL.md': skillMd({ name, description: 'x'.repeat(1025) }) }),
      422,
      /description/,
    ],
    [
      'unparseable YAML',
      (name) => files({ 'SKILL.md': `---\nname: ${name}\ndescription: [unclosed\n---\n# x\n` }),
      422,
      /YAML|frontmatter/i,
    ],
    [
      'a metadata.version that is no version',
      (name) => variant(name, 'x', 'metadata:\n  version: banana'),
      422,
      /metadata\.version/,
    ],
  ];

  it.each(invalid)('%s', async (_label, bundleOf, status, detail) => {
    const name = uniqueName('invalid');
    const namespace = uniqueName('never');
    const problem = await refusal(publishFiles(ctx.registry, bundleOf(name), { namespace }));
    expect(problem).toMatchObject({ status });
    const errors = (problem.extensions as { errors: { path: string; detail: string }[] }).errors;
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((error) => `${error.path} ${error.detail}`).join('\n')).toMatch(detail);
    expect(await ctx.registry.repositories.skills.idOf(name, namespace)).toBeUndefined();
    expect(await ctx.registry.repositories.skills.namespaceExists(namespace)).toBe(false);
  });

  it('a ?version= that is not semver is a 400, storing nothing', async () => {
    const name = uniqueName('bad-version');
    const namespace = uniqueName('never');
    const problem = await refusal(
      publishFiles(ctx.registry, variant(name, 'a'), { version: 'v1', namespace }),
    );
    expect(problem).toMatchObject({ status: 400 });
    expect(problem.message).toContain("version 'v1' is not a semver version");
    expect(await ctx.registry.repositories.skills.namespaceExists(namespace)).toBe(false);
  });
});

describe('namespaces', () => {
  it('the first publish into a namespace creates it, with a version line of its own', async () => {
    const namespace = uniqueName('team');
    const name = uniqueName('shared-name');
    expect(await ctx.registry.repositories.skills.namespaceExists(namespace)).toBe(false);
    await publishFiles(ctx.registry, variant(name, 'default one'));
    await publishFiles(ctx.registry, variant(name, 'default two'));
    const there = await publishFiles(ctx.registry, variant(name, 'team one'), { namespace });
    // Not 1.0.2, and no conflict with default's 1.0.0: the same name elsewhere is another skill.
    expect(there).toMatchObject({ version: '1.0.0', created: true });
    expect(await ctx.registry.repositories.skills.namespaceExists(namespace)).toBe(true);
    expect((await ctx.registry.scopes.namespace(namespace)).namespace).toBe(namespace);
    expect(await stored(name, namespace)).toEqual({
      versions: ['1.0.0'],
      yanked: [],
      tags: { latest: '1.0.0' },
    });
    expect((await stored(name))?.versions).toEqual(['1.0.0', '1.0.1']);
  });

  it('tag moves and yanks act in the namespace named only', async () => {
    const namespace = uniqueName('team');
    const name = uniqueName('both');
    for (const where of [undefined, namespace]) {
      await publishFiles(ctx.registry, variant(name, `${where} a`), { namespace: where });
      await publishFiles(ctx.registry, variant(name, `${where} b`), { namespace: where });
    }
    await ctx.registry.writes.moveTag(name, 'stable', '1.0.0', TEST_ACTOR, namespace);
    await ctx.registry.writes.yank(name, '1.0.1', TEST_ACTOR, namespace);
    expect(await stored(name, namespace)).toEqual({
      versions: ['1.0.0', '1.0.1'],
      yanked: ['1.0.1'],
      tags: { latest: '1.0.0', stable: '1.0.0' },
    });
    expect(await stored(name)).toEqual({
      versions: ['1.0.0', '1.0.1'],
      yanked: [],
      tags: { latest: '1.0.1' },
    });
  });

  it('a tag move or yank in a namespace never published into is a 404 naming the namespaces, creating nothing', async () => {
    const namespace = uniqueName('nowhere');
    const name = uniqueName('any');
    await publishFiles(ctx.registry, variant(name, 'a'));
    for (const write of [
      () => ctx.registry.writes.moveTag(name, 'stable', '1.0.0', TEST_ACTOR, namespace),
      () => ctx.registry.writes.yank(name, '1.0.0', TEST_ACTOR, namespace),
    ]) {
      const problem = await refusal(write());
      expect(problem).toMatchObject({ status: 404, extensions: { namespace } });
      expect(problem.message).toContain(`no namespace '${namespace}'`);
      expect((problem.extensions as { namespaces: string[] }).namespaces).toContain('default');
    }
    expect(await ctx.registry.repositories.skills.namespaceExists(namespace)).toBe(false);
  });

  it('a tag move or yank of an unknown skill is a 404 naming similar skills of that namespace', async () => {
    const name = uniqueName('similar');
    await publishFiles(ctx.registry, variant(name, 'a'));
    const problem = await refusal(ctx.registry.writes.yank(`${name}s`, '1.0.0', TEST_ACTOR));
    expect(problem).toMatchObject({ status: 404 });
    expect((problem.extensions as { suggestions: string[] }).suggestions).toContain(name);
    expect(await ctx.registry.repositories.skills.idOf(`${name}s`)).toBeUndefined();
  });
});

describe('dist-tags', () => {
  it('a tag move answers the previous version, and is audited', async () => {
    const name = uniqueName('moved');
    await publishFiles(ctx.registry, variant(name, 'a'));
    await publishFiles(ctx.registry, variant(name, 'b'));
    expect(await ctx.registry.writes.moveTag(name, 'stable', '1.0.0', TEST_ACTOR)).toEqual({
      previous: null,
    });
    expect(await ctx.registry.writes.moveTag(name, 'stable', '1.0.1', TEST_ACTOR)).toEqual({
      previous: '1.0.0',
    });
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.1', stable: '1.0.1' });
    expect((await auditOf(name)).filter((entry) => entry.action === 'tag')).toHaveLength(2);
  });

  it('moving latest by hand pins it: a higher publish leaves it, a yank of it unpins it', async () => {
    const name = uniqueName('pinned');
    await publishFiles(ctx.registry, variant(name, 'a'));
    await publishFiles(ctx.registry, variant(name, 'b'));
    await ctx.registry.writes.moveTag(name, 'latest', '1.0.0', TEST_ACTOR);
    await publishFiles(ctx.registry, variant(name, 'c'));
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.0' });
    const yanked = await ctx.registry.writes.yank(name, '1.0.0', TEST_ACTOR);
    expect(yanked).toEqual({ alreadyYanked: false, latest: '1.0.2' });
    await publishFiles(ctx.registry, variant(name, 'd'));
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.3' });
  });

  it('refuses a yanked version (409) or an unknown one (404 listing the versions), leaving the tag', async () => {
    const name = uniqueName('refused-tag');
    await publishFiles(ctx.registry, variant(name, 'a'), { tag: 'stable' });
    await publishFiles(ctx.registry, variant(name, 'b'));
    await ctx.registry.writes.yank(name, '1.0.1', TEST_ACTOR);
    const yanked = await refusal(ctx.registry.writes.moveTag(name, 'stable', '1.0.1', TEST_ACTOR));
    expect(yanked).toMatchObject({ status: 409, extensions: { name, version: '1.0.1' } });
    expect(yanked.message).toContain('is yanked');
    const unknown = await refusal(ctx.registry.writes.moveTag(name, 'stable', '9.0.0', TEST_ACTOR));
    expect(unknown).toMatchObject({ status: 404, extensions: { availableVersions: ['1.0.1', '1.0.0'] } });
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.0', stable: '1.0.0' });
  });
});

describe('yank', () => {
  it('removes every tag from the version and moves latest to the highest version left', async () => {
    const name = uniqueName('yank');
    await publishFiles(ctx.registry, variant(name, 'a'), { version: '1.0.0' });
    await publishFiles(ctx.registry, variant(name, 'b'), { version: '2.0.0', tag: 'stable' });
    await publishFiles(ctx.registry, variant(name, 'c'), { version: '1.5.0' });
    await ctx.registry.writes.moveTag(name, 'beta', '2.0.0', TEST_ACTOR);
    expect(await ctx.registry.writes.yank(name, '2.0.0', TEST_ACTOR)).toEqual({
      alreadyYanked: false,
      latest: '1.5.0',
    });
    expect(await stored(name)).toEqual({
      versions: ['1.0.0', '1.5.0', '2.0.0'],
      yanked: ['2.0.0'],
      tags: { latest: '1.5.0' },
    });
    const audit = (await auditOf(name)).find((entry) => entry.action === 'yank');
    expect(audit).toMatchObject({ version: '2.0.0' });
  });

  it('a second yank is idempotent; yanking every version leaves no latest', async () => {
    const name = uniqueName('yank-all');
    await publishFiles(ctx.registry, variant(name, 'a'));
    await publishFiles(ctx.registry, variant(name, 'b'));
    await ctx.registry.writes.yank(name, '1.0.1', TEST_ACTOR);
    const revision = await ctx.registry.reads.revision();
    expect(await ctx.registry.writes.yank(name, '1.0.1', TEST_ACTOR)).toEqual({
      alreadyYanked: true,
      latest: '1.0.0',
    });
    expect(await ctx.registry.reads.revision()).toBe(revision);
    expect((await auditOf(name)).filter((entry) => entry.action === 'yank')).toHaveLength(1);
    expect(await ctx.registry.writes.yank(name, '1.0.0', TEST_ACTOR)).toEqual({
      alreadyYanked: false,
      latest: null,
    });
    expect((await stored(name))?.tags).toEqual({});
  });

  it('an unknown version is a 404 listing the versions there are', async () => {
    const name = uniqueName('yank-unknown');
    await publishFiles(ctx.registry, variant(name, 'a'));
    const problem = await refusal(ctx.registry.writes.yank(name, '1.2.3', TEST_ACTOR));
    expect(problem).toMatchObject({
      status: 404,
      extensions: { version: '1.2.3', availableVersions: ['1.0.0'] },
    });
  });
});

describe('concurrent writes to one skill', () => {
  it('identical publishes at once store one version; different ones each get their own next patch', async () => {
    const name = uniqueName('racing');
    const same = await Promise.all(
      Array.from({ length: 4 }, () => publishFiles(ctx.registry, variant(name, 'same'))),
    );
    expect(same.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(same.map((result) => result.version))).toEqual(new Set(['1.0.0']));
    const different = await Promise.all(
      ['a', 'b', 'c'].map((label) => publishFiles(ctx.registry, variant(name, label))),
    );
    expect(different.map((result) => result.version).sort()).toEqual(['1.0.1', '1.0.2', '1.0.3']);
    expect((await stored(name))?.tags).toEqual({ latest: '1.0.3' });
  });
});
