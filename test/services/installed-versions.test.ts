import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { installableFiles } from '../../src/bundle/installable-skill-md.js';
import { skillsLockHash } from '../../src/bundle/skills-lock-hash.js';
import { files, uniqueName } from '../helpers/bundles.js';
import { namespaceScope, publishFiles, registryPerFile } from '../helpers/registry.js';

// What hosts install of a version (computedHash, git tree and commit): computed at publish, stored with
// the version, and computed once for versions stored before (the start-up backfill, or on demand).

const ctx = registryPerFile();

async function stored(name: string) {
  const { record } = await ctx.registry.reads.resolve(namespaceScope(), name, {});
  const result = await ctx.registry.database.db.execute(
    sql`select computed_hash, git_tree, git_commit from skill_versions where id = ${record.id}`,
  );
  const row = (result as unknown as { rows: Record<string, string | null>[] }).rows[0]!;
  return { record, row };
}

describe('installed identity', () => {
  it('is stored at publish, over the folder as installers get it (SKILL.md completed)', async () => {
    const name = uniqueName('installed');
    // No frontmatter: installers get a SKILL.md with name and description written in.
    const bundle = files({
      'SKILL.md': '# Installed\n\nDoes the installed thing.\n',
      'scripts/a.sh': '#!/bin/sh\n',
    });
    await publishFiles(ctx.registry, bundle, { name });
    const { record, row } = await stored(name);
    const installable = installableFiles(bundle, name, record.description).files;
    expect(installable.find((file) => file.path === 'SKILL.md')!.bytes).not.toEqual(bundle[0]!.bytes);
    expect(row.computed_hash).toBe(skillsLockHash(installable));
    expect(row.git_commit).toMatch(/^[0-9a-f]{40}$/);
    expect(row.git_tree).toMatch(/^[0-9a-f]{40}$/);
  });

  it('of versions stored before it existed is filled by the backfill, the same as at publish', async () => {
    const name = uniqueName('backfilled');
    await publishFiles(
      ctx.registry,
      files({ 'SKILL.md': `---\nname: ${name}\ndescription: Older.\n---\nBody\n` }),
    );
    const before = await stored(name);
    await ctx.registry.database.db.execute(
      sql`update skill_versions set computed_hash = null, git_tree = null, git_commit = null where id = ${before.record.id}`,
    );
    expect((await stored(name)).row.git_commit).toBeNull();
    expect(await ctx.registry.installed.backfill()).toBeGreaterThanOrEqual(1);
    expect((await stored(name)).row).toEqual(before.row);
  });

  it('is computed on demand (and stored) when a read needs it first', async () => {
    const name = uniqueName('on-demand');
    await publishFiles(
      ctx.registry,
      files({ 'SKILL.md': `---\nname: ${name}\ndescription: Lazy.\n---\nBody\n` }),
    );
    const before = await stored(name);
    await ctx.registry.database.db.execute(
      sql`update skill_versions set computed_hash = null, git_tree = null, git_commit = null where id = ${before.record.id}`,
    );
    const identity = await ctx.registry.installed.identity(before.record.id);
    expect(identity.computedHash).toBe(before.row.computed_hash);
    expect((await stored(name)).row).toEqual(before.row);
  });
});
