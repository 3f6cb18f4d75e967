import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestDatabase, type TestDatabase, testConfig } from '../helpers/context.js';

const postgresUrl = inject('postgresUrl');

/** Publishes two versions, a dist-tag and a token: everything a restart must keep. */
async function writeState(app: FastifyInstance, name: string) {
  const bundle = (body: string) =>
    files({
      'SKILL.md': skillMd({ name, description: 'Survives restarts.', body }),
      'references/guide.md': `# Guide\n\n${body}`,
      'scripts/run.sh': '#!/bin/sh\necho hi\n',
    });
  const first = await publish(app, bundle('first\n'));
  expect(first.statusCode, first.body).toBe(201);
  const second = await publish(app, bundle('second\n'));
  expect(second.statusCode, second.body).toBe(201);
  const tag = await app.inject({
    method: 'PUT',
    url: `/skills/${name}/tags/stable`,
    headers: adminAuth,
    payload: { version: '1.0.0' },
  });
  expect(tag.statusCode).toBe(200);
  const token = await app.inject({
    method: 'POST',
    url: '/tokens',
    headers: adminAuth,
    payload: { name: 'ci', scopes: ['publish'] },
  });
  expect(token.statusCode).toBe(201);
  return {
    secret: token.json().secret as string,
    digests: [first.json().digest as string, second.json().digest as string],
    bundle,
  };
}

async function expectState(
  app: FastifyInstance,
  name: string,
  state: Awaited<ReturnType<typeof writeState>>,
) {
  const versions = await app.inject(`/skills/${name}/versions`);
  expect(versions.statusCode, versions.body).toBe(200);
  expect(
    versions
      .json()
      .map((v: { version: string; digest: string; tags: string[] }) => [v.version, v.digest, v.tags]),
  ).toEqual([
    ['1.0.1', state.digests[1], ['latest']],
    ['1.0.0', state.digests[0], ['stable']],
  ]);
  expect((await app.inject(`/skills/${name}/content`)).body).toContain('second');
  expect((await app.inject(`/skills/${name}/content?tag=stable`)).body).toContain('first');
  const file = await app.inject(`/skills/${name}/files/references/guide.md?version=1.0.0`);
  expect(file.statusCode).toBe(200);
  expect(file.body).toBe('# Guide\n\nfirst\n');
  const catalogue = await app.inject(`/skills?q=${name}`);
  expect(catalogue.json().items.map((item: { name: string }) => item.name)).toContain(name);

  // The token created before the restart still works, and republishing is still idempotent.
  const again = await publish(app, state.bundle('second\n'), {
    headers: { authorization: `Bearer ${state.secret}` },
  });
  expect(again.statusCode, again.body).toBe(200);
  expect(again.json()).toMatchObject({ version: '1.0.1', created: false });
  const audit = await app.inject({ url: '/audit', headers: adminAuth });
  expect(
    audit
      .json()
      .items.filter(
        (item: { skill: string; action: string }) => item.skill === name && item.action === 'publish',
      ),
  ).toHaveLength(2);
}

describe('embedded PGlite under SKILLREG_DATA_DIR', () => {
  let dataDir = '';
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps skills, tags and tokens across a restart', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'skillreg-persist-'));
    const config = testConfig({ SKILLREG_DATA_DIR: dataDir });
    expect(config.databaseUrl).toBeUndefined();
    const name = uniqueName('persisted');

    // No database option: the app opens (and closes) PGlite from the config, as npm start does.
    const first = await buildApp({ config, logger: false });
    let state: Awaited<ReturnType<typeof writeState>>;
    try {
      expect((await first.inject('/readyz')).json()).toEqual({ status: 'ok', database: 'pglite' });
      state = await writeState(first, name);
    } finally {
      await first.close();
    }

    const second = await buildApp({ config, logger: false });
    try {
      await expectState(second, name, state);
    } finally {
      await second.close();
    }
  }, 120_000);
});

describe.skipIf(!postgresUrl)(
  `PostgreSQL via DATABASE_URL${postgresUrl ? '' : ' [skipped: needs PostgreSQL; set TEST_DATABASE_URL or start Docker]'}`,
  () => {
    let testDatabase: TestDatabase | undefined;
    afterAll(async () => testDatabase?.drop());

    it('keeps skills, tags and tokens across a restart', async () => {
      testDatabase = await createTestDatabase();
      const config = testConfig({ DATABASE_URL: testDatabase.url! });
      const name = uniqueName('persisted-pg');

      const first = await buildApp({ config, logger: false });
      let state: Awaited<ReturnType<typeof writeState>>;
      try {
        expect((await first.inject('/readyz')).json()).toEqual({ status: 'ok', database: 'postgres' });
        state = await writeState(first, name);
      } finally {
        await first.close();
      }

      const second = await buildApp({ config, logger: false });
      try {
        await expectState(second, name, state);
      } finally {
        await second.close();
      }
    }, 120_000);
  },
);
