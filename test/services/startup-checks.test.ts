/**
 * The start-up checks (src/services/startup-checks.ts): the first pass reads the whole catalogue and
 * fills what versions stored by an older release lack; later passes read only the skills written
 * since the last complete one, and a pass that fails leaves the next one complete.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seedSkills } from '../../bench/seed.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

async function rowsOf<T>(query: ReturnType<typeof sql>): Promise<T[]> {
  return ((await ctx.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}

/** What an older release left behind for `name`: no archive of its current version, no attestation. */
async function strip(name: string): Promise<void> {
  await ctx.database.db.execute(sql`
    delete from version_archives where version_id in (select id from skill_versions where name = ${name})`);
  await ctx.database.db.execute(sql`
    delete from attestations where version_id in (select id from skill_versions where name = ${name})`);
}

/** A write to `name` as SkillsRepository.touch stamps it (bumps the revision, stamps the skill). */
async function stampWritten(name: string): Promise<void> {
  await ctx.database.db.execute(sql`
    with bumped as (update registry_state set revision = revision + 1 where id = 1 returning revision)
    update skills set changed_revision = (select revision from bumped) where name = ${name}`);
}

describe('start-up checks', () => {
  it('fill the whole catalogue once, then read only the skills written since', async () => {
    const checks = ctx.app.registry.startupChecks;
    // Rows as a bulk load or an older release stores them: no archives, no attestations.
    await seedSkills(ctx.database, { count: 4, start: 970_000, batch: 4, bodyBytes: 400 });
    const names = (await rowsOf<{ name: string }>(sql`select name from skills order by name`)).map(
      (row) => row.name,
    );
    expect(names).toHaveLength(4);
    expect(await checks.archives()).toBe(4);
    expect(await checks.attestations()).toBe(4);
    expect(await checks.archives()).toBe(0);
    expect(await checks.attestations()).toBe(0);
    const recorded = await rowsOf<{ name: string; revision: string }>(
      sql`select name, revision::text from startup_checks order by name`,
    );
    expect(recorded.map((row) => row.name)).toEqual(['archives', 'attestations']);

    // A skill nobody wrote since is not read again (a whole-catalogue check would find it)...
    const [quiet, written] = names as [string, string];
    await strip(quiet);
    await strip(written);
    expect(await checks.archives()).toBe(0);
    expect(await checks.attestations()).toBe(0);
    // ...one written since is, and what it lacks is filled.
    await stampWritten(written);
    expect(await checks.archives()).toBe(1);
    expect(await checks.attestations()).toBe(1);
    const filled = await rowsOf<{ archives: number; attestations: number }>(sql`
      select (select count(*)::int from version_archives a join skill_versions v on v.id = a.version_id
                where v.name = ${written} and a.format = 'installable.zip') as archives,
             (select count(*)::int from attestations a join skill_versions v on v.id = a.version_id
                where v.name = ${written}) as attestations`);
    expect(filled[0]).toEqual({ archives: 1, attestations: 1 });
    // The whole-catalogue passes the services keep still find the quiet one.
    expect(await ctx.app.registry.signing.backfill()).toBe(1);
    expect(await ctx.app.registry.archives.backfill()).toBe(1);
  });

  it('a pass that fails records nothing: the next one reads what the failed one did not', async () => {
    const checks = ctx.app.registry.startupChecks;
    const before = await rowsOf<{ revision: string }>(
      sql`select revision::text from startup_checks where name = 'attestations'`,
    );
    await seedSkills(ctx.database, { count: 2, start: 971_000, batch: 2, bodyBytes: 400 });
    const signing = ctx.app.registry.signing;
    const failing = vi.spyOn(signing, 'backfill').mockRejectedValueOnce(new Error('connection lost'));
    try {
      await expect(checks.attestations()).rejects.toThrow('connection lost');
    } finally {
      failing.mockRestore();
    }
    const after = await rowsOf<{ revision: string }>(
      sql`select revision::text from startup_checks where name = 'attestations'`,
    );
    expect(after).toEqual(before);
    expect(await checks.attestations()).toBe(2);
  });

  it('prompt counts and installed identities: versions still lacking them, by their partial indexes', async () => {
    const checks = ctx.app.registry.startupChecks;
    await seedSkills(ctx.database, { count: 3, start: 972_000, batch: 3, bodyBytes: 400 });
    await ctx.database.db.execute(sql`
      update skill_versions set git_commit = null, git_tree = null, computed_hash = null,
        tokens_prompt_xml = null, tokens_prompt_markdown = null, tokens_prompt_name = null
      where name in (select name from skill_versions order by name desc limit 3)`);
    expect(await checks.installedIdentities()).toBe(3);
    expect(await checks.promptTokens()).toBe(3);
    expect(await checks.installedIdentities()).toBe(0);
    expect(await checks.promptTokens()).toBe(0);
    const indexes = await rowsOf<{ indexname: string }>(sql`
      select indexname from pg_indexes where tablename = 'skill_versions' and indexname like '%without%'
      order by indexname`);
    expect(indexes.map((row) => row.indexname)).toEqual([
      'skill_versions_without_identity_idx',
      'skill_versions_without_prompt_tokens_idx',
    ]);
  });
});
