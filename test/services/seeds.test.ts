import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { prepareBundle } from '../../src/bundle/prepare.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { readSkillFolder } from '../../src/services/seed.js';
import { files, publish, skillMd } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp, testConfig } from '../helpers/context.js';

const SEED_DIR = path.resolve(import.meta.dirname, '../..', 'skills-seed');
const SEEDS = ['progressive-disclosure', 'publishing-skills', 'writing-skills'];
/** Each seed's metadata.version: a seed whose content changes gets the next one (a 409 otherwise). */
const SEED_VERSIONS: Record<string, string> = {
  'progressive-disclosure': '1.0.0',
  'publishing-skills': '1.0.1',
  'writing-skills': '1.0.1',
};

async function versionsOf(
  app: FastifyInstance,
  name: string,
): Promise<{ version: string; tags: string[] }[]> {
  const res = await app.inject(`/skills/${name}/versions`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function auditCount(app: FastifyInstance): Promise<number> {
  const res = await app.inject({ url: '/audit?limit=500', headers: adminAuth });
  return res.json().items.length;
}

describe('the bundled skills-seed folder', () => {
  it.each(SEEDS)(
    '%s is a valid skill with no warnings, its own version and a what-and-when description',
    async (seed) => {
      const folder = path.join(SEED_DIR, seed);
      const prepared = prepareBundle(await readSkillFolder(folder), { limits: DEFAULT_LIMITS });
      const { skill } = prepared;
      expect(skill.warnings).toEqual([]);
      expect(skill.name).toBe(seed);
      expect(skill.metadataVersion).toBe(SEED_VERSIONS[seed]);
      expect(skill.frontmatter.metadata).toMatchObject({ version: SEED_VERSIONS[seed] });
      expect(skill.description.length).toBeGreaterThan(100);
      // writing-skills recommends at most about 400 characters; the seeds follow their own advice.
      expect(skill.description.length).toBeLessThanOrEqual(420);
      expect(skill.description).toMatch(/\bUse when\b/);
      // Bodies stay short; detail lives in references/, and every bundled file is linked from the body.
      expect(skill.body.split('\n').length).toBeLessThan(200);
      const others = prepared.files.filter((file) => file.path !== 'SKILL.md');
      expect(others.length).toBeGreaterThan(0);
      for (const file of others) {
        expect(file.path).toMatch(/^references\/[a-z0-9-]+\.md$/);
        expect(skill.body, `${seed} links ${file.path}`).toContain(`](${file.path})`);
      }
    },
  );
});

describe('seeding at start', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_SEED_DIR: SEED_DIR });
  });
  afterAll(async () => ctx?.close());

  const restart = async (seedDir = SEED_DIR) => {
    const app = await buildApp({
      config: testConfig({ SKILLREG_SEED_DIR: seedDir }),
      database: ctx.database,
      logger: false,
    });
    await app.close();
  };

  it('loads every seed skill into the catalogue at its version, published by "seed"', async () => {
    const res = await ctx.app.inject('/skills?limit=500');
    const items: { name: string; version: string; tags: string[] }[] = res.json().items;
    for (const seed of SEEDS) {
      expect(
        items.find((item) => item.name === seed),
        seed,
      ).toMatchObject({ version: SEED_VERSIONS[seed], tags: ['latest'] });
    }
    const content = await ctx.app.inject('/skills/publishing-skills/content');
    expect(content.body).toContain('POST');
    const reference = await ctx.app.inject('/skills/writing-skills/files/references/frontmatter.md');
    expect(reference.statusCode).toBe(200);
    const audit = (await ctx.app.inject({ url: '/audit?limit=500', headers: adminAuth })).json().items;
    const seeded = audit.filter((item: { action: string; actor: string }) => item.action === 'publish');
    expect(seeded.map((item: { skill: string }) => item.skill).sort()).toEqual(SEEDS);
    expect(seeded.every((item: { actor: string }) => item.actor === 'seed')).toBe(true);
  });

  it('starting again creates nothing new', async () => {
    const audit = await auditCount(ctx.app);
    const revision = (await ctx.app.inject('/skills')).headers.etag;
    await restart();
    await restart();
    for (const seed of SEEDS) {
      expect(
        (await versionsOf(ctx.app, seed)).map((v) => v.version),
        seed,
      ).toEqual([SEED_VERSIONS[seed]]);
    }
    expect(await auditCount(ctx.app)).toBe(audit);
    expect((await ctx.app.inject('/skills')).headers.etag).toBe(revision);
  });

  it('never adds or changes anything for a seed skill that has a newer published version', async () => {
    const newer = files({
      'SKILL.md': skillMd({
        name: 'writing-skills',
        description: 'Our own, newer guide to writing skills. Use when writing a skill here.',
        extra: 'metadata:\n  version: "2.0.0"',
      }),
    });
    const published = await publish(ctx.app, newer);
    expect(published.statusCode, published.body).toBe(201);
    expect(published.json().version).toBe('2.0.0');
    const audit = await auditCount(ctx.app);

    await restart();
    const versions = await versionsOf(ctx.app, 'writing-skills');
    expect(versions).toEqual([
      expect.objectContaining({ version: '2.0.0', tags: ['latest'] }),
      expect.objectContaining({ version: SEED_VERSIONS['writing-skills'], tags: [] }),
    ]);
    const detail = await ctx.app.inject('/skills/writing-skills');
    expect(detail.json()).toMatchObject({ version: '2.0.0', distTags: { latest: '2.0.0' } });
    expect(await auditCount(ctx.app)).toBe(audit);
  });

  it('leaves a skill alone when only a newer version exists (the seed version never appears)', async () => {
    const seedDir = await mkdtemp(path.join(tmpdir(), 'skillreg-seed-newer-'));
    try {
      const name = `seed-newer-${process.pid}`;
      await mkdir(path.join(seedDir, name));
      await writeFile(
        path.join(seedDir, name, 'SKILL.md'),
        skillMd({ name, description: 'Seed copy.', extra: 'metadata:\n  version: "1.0.0"' }),
      );
      const own = files({
        'SKILL.md': skillMd({
          name,
          description: 'Published first.',
          extra: 'metadata:\n  version: "3.1.0"',
        }),
      });
      expect((await publish(ctx.app, own)).statusCode).toBe(201);
      await restart(seedDir);
      expect((await versionsOf(ctx.app, name)).map((v) => v.version)).toEqual(['3.1.0']);
    } finally {
      await rm(seedDir, { recursive: true, force: true });
    }
  });
});

describe('broken seeds', () => {
  let seedDir = '';
  let ctx: TestApp | undefined;
  beforeAll(async () => {
    seedDir = await mkdtemp(path.join(tmpdir(), 'skillreg-seed-broken-'));
    const write = async (folder: string, file: string, content: string) => {
      await mkdir(path.dirname(path.join(seedDir, folder, file)), { recursive: true });
      await writeFile(path.join(seedDir, folder, file), content);
    };
    await write('a-broken-yaml', 'SKILL.md', '---\nname: a-broken-yaml\ndescription: [unclosed\n---\nbody\n');
    await write('b-bad-name', 'SKILL.md', skillMd({ name: 'Bad Name!', description: 'Invalid name.' }));
    await write('c-no-skill-md', 'README.md', '# not a skill\n');
    await write(
      'd-good-seed',
      'SKILL.md',
      skillMd({ name: 'd-good-seed', description: 'A seed that works.' }),
    );
    await write('d-good-seed', 'references/notes.md', '# Notes\n');
    await writeFile(path.join(seedDir, 'stray-file.md'), 'not a folder\n');
  });
  afterAll(async () => {
    await ctx?.close();
    if (seedDir) await rm(seedDir, { recursive: true, force: true });
  });

  it('do not stop the start; the valid seeds load', async () => {
    ctx = await createTestApp({ SKILLREG_SEED_DIR: seedDir });
    expect((await ctx.app.inject('/readyz')).statusCode).toBe(200);
    const names = (await ctx.app.inject('/skills')).json().items.map((item: { name: string }) => item.name);
    expect(names).toEqual(['d-good-seed']);
    expect((await ctx.app.inject('/skills/d-good-seed/files/references/notes.md')).statusCode).toBe(200);
  });

  it('a missing seed folder does not stop the start either', async () => {
    const other = await createTestApp({ SKILLREG_SEED_DIR: path.join(seedDir, 'does-not-exist') });
    try {
      expect((await other.app.inject('/skills')).json().items).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
