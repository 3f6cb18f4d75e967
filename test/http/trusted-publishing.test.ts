import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/client.js';
import { publicKeyOfJwk, verifyEnvelope } from '../../src/provenance/dsse.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { runSkillreg, showRun } from '../helpers/cli-output.js';
import {
  ADMIN_TOKEN,
  adminAuth,
  createTestDatabase,
  type TestDatabase,
  testConfig,
} from '../helpers/context.js';
import { listening } from '../helpers/http.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';
import { expectProblem } from '../helpers/problem.js';

const AUDIENCE = 'https://registry.example.test';

let issuer: TestIssuer;
let testDatabase: TestDatabase;
let database: Database;
let app: FastifyInstance;
let work: string;

/** The registry trusting the test issuer, keys fetched again at once when a token names a new one. */
async function registryTrusting(env: Record<string, string>): Promise<FastifyInstance> {
  const config = testConfig(env);
  return buildApp({
    config: { ...config, oidc: { ...config.oidc, keyCooldownMs: 0 } },
    database,
    logger: false,
  });
}

beforeAll(async () => {
  issuer = await startTestIssuer();
  testDatabase = await createTestDatabase();
  database = await testDatabase.open();
  app = await registryTrusting({ SKILLREG_OIDC_ISSUERS: issuer.url, SKILLREG_PUBLIC_URL: AUDIENCE });
  work = await mkdtemp(path.join(tmpdir(), 'skillreg-oidc-'));
});

afterAll(async () => {
  await app?.close();
  await database?.close();
  await testDatabase?.drop();
  await issuer?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function bind(namespace: string, id: string, claims: Record<string, string>, issuerUrl = issuer.url) {
  return app.inject({
    method: 'PUT',
    url: `/namespaces/${namespace}/trusted-publishers/${id}`,
    headers: adminAuth,
    payload: { issuer: issuerUrl, claims },
  });
}

function exchange(token: string) {
  return app.inject({ method: 'POST', url: '/oidc/exchange', payload: { token } });
}

async function auditActions(action: string): Promise<Record<string, unknown>[]> {
  const res = await app.inject({
    method: 'GET',
    url: `/audit?action=${action}&limit=200`,
    headers: adminAuth,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

describe('trusted publishers (admin bindings)', () => {
  it('creates, replaces, lists, reads and removes a binding, each audited', async () => {
    const ns = uniqueName('tp');
    const created = await bind(ns, 'github-main', { repository: 'acme/skills', ref: 'refs/heads/main' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      id: 'github-main',
      namespace: ns,
      issuer: issuer.url,
      claims: { repository: 'acme/skills', ref: 'refs/heads/main' },
      createdBy: 'admin-token',
    });
    const replaced = await bind(ns, 'github-main', { repository: 'acme/other' });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().claims).toEqual({ repository: 'acme/other' });

    const list = await app.inject({ url: `/namespaces/${ns}/trusted-publishers`, headers: adminAuth });
    expect(list.json()).toMatchObject({ namespace: ns, items: [{ id: 'github-main' }] });
    const one = await app.inject({
      url: `/namespaces/${ns}/trusted-publishers/github-main`,
      headers: adminAuth,
    });
    expect(one.json().claims).toEqual({ repository: 'acme/other' });

    const removed = await app.inject({
      method: 'DELETE',
      url: `/namespaces/${ns}/trusted-publishers/github-main`,
      headers: adminAuth,
    });
    expect(removed.statusCode).toBe(204);
    const again = await app.inject({
      method: 'DELETE',
      url: `/namespaces/${ns}/trusted-publishers/github-main`,
      headers: adminAuth,
    });
    expect(expectProblem(again, 404).detail).toContain('no trusted publisher');

    const puts = (await auditActions('trusted-publisher.put')).filter((entry) => entry.namespace === ns);
    expect(puts.map((entry) => (entry.detail as { created: boolean }).created)).toEqual([false, true]);
    const deletes = (await auditActions('trusted-publisher.delete')).filter(
      (entry) => entry.namespace === ns,
    );
    expect(deletes).toHaveLength(1);
  });

  it('refuses bad bindings with problems saying what to fix', async () => {
    const ns = uniqueName('tp');
    expect(expectProblem(await bind(ns, 'Bad_ID!', { repository: 'acme/skills' }), 400).detail).toContain(
      'trusted publisher id',
    );
    const unknownIssuer = expectProblem(
      await bind(ns, 'gh', { repository: 'acme/skills' }, 'https://issuer.example.com'),
      400,
    );
    expect(unknownIssuer.detail).toContain('SKILLREG_OIDC_ISSUERS');
    expectProblem(await bind(ns, 'gh', {}), 400);
    expectProblem(await bind(ns, 'gh', { repository: 'acme/skills', branch: 'main' }), 400);
    const anonymous = await app.inject({
      method: 'PUT',
      url: `/namespaces/${ns}/trusted-publishers/gh`,
      payload: { issuer: issuer.url, claims: { repository: 'acme/skills' } },
    });
    expectProblem(anonymous, 401);
    const list = await app.inject({ url: `/namespaces/${ns}/trusted-publishers`, headers: adminAuth });
    expect(list.json().items).toEqual([]);
  });
});

describe('POST /oidc/exchange', () => {
  it('grants a 15-minute publish token for exactly the bound namespaces; its versions name the CI identity', async () => {
    const repository = `acme/${uniqueName('repo')}`;
    const [first, second, elsewhere] = [uniqueName('ci'), uniqueName('ci'), uniqueName('ci')];
    expect((await bind(first, 'main', { repository })).statusCode).toBe(201);
    expect(
      (
        await bind(second, 'main-workflow', {
          repository,
          workflow_ref: `${repository}/.github/workflows/publish.yml@refs/heads/main`,
          ref: 'refs/heads/main',
        })
      ).statusCode,
    ).toBe(201);
    expect((await bind(elsewhere, 'other', { repository: `${repository}-fork` })).statusCode).toBe(201);

    const sha = 'c0ffee'.padEnd(40, '0');
    const token = await issuer.sign({
      audience: AUDIENCE,
      claims: {
        repository,
        workflow_ref: `${repository}/.github/workflows/publish.yml@refs/heads/main`,
        sha,
        run_id: '987654',
      },
    });
    const before = Date.now();
    const res = await exchange(token);
    expect(res.statusCode, res.body).toBe(201);
    const granted = res.json();
    expect(granted.scopes).toEqual(['publish']);
    expect(granted.namespaces).toEqual([first, second].sort());
    const lifetime = Date.parse(granted.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(14 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60 * 1000 + 1000);
    expect(res.headers['cache-control']).toBe('no-store');

    const bearer = { authorization: `Bearer ${granted.secret}` };
    const name = uniqueName('ci-skill');
    const bundle = files({
      'SKILL.md': skillMd({ name, description: 'Formats release notes from commits.' }),
    });
    const published = await publish(app, bundle, { query: `namespace=${first}`, headers: bearer });
    expect(published.statusCode, published.body).toBe(201);
    // Only the bound namespaces: not the one bound to another repository, nor default.
    expectProblem(await publish(app, bundle, { query: `namespace=${elsewhere}`, headers: bearer }), 403);
    expectProblem(await publish(app, bundle, { headers: bearer }), 403);
    // Publish scope only: no admin writes.
    expectProblem(
      await app.inject({ method: 'GET', url: `/namespaces/${first}/trusted-publishers`, headers: bearer }),
      403,
    );

    const attestation = await app.inject({ url: `/namespaces/${first}/skills/${name}/attestation` });
    expect(attestation.statusCode, attestation.body).toBe(200);
    const keys = await app.inject({ url: '/.well-known/skillreg/keys.json' });
    const checked = verifyEnvelope(
      attestation.json(),
      new Map(keys.json().keys.map((jwk: { kid: string; x: string }) => [jwk.kid, publicKeyOfJwk(jwk)])),
    );
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.statement.predicate.publisher).toEqual({
      kind: 'oidc',
      issuer: issuer.url,
      repository,
      workflow_ref: `${repository}/.github/workflows/publish.yml@refs/heads/main`,
      ref: 'refs/heads/main',
      sha,
      run_id: '987654',
    });

    const exchanges = (await auditActions('oidc.exchange')).filter(
      (entry) => (entry.detail as { repository: string }).repository === repository,
    );
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]!.detail).toMatchObject({ namespaces: [first, second].sort(), run_id: '987654' });
    const publishes = (await auditActions('publish')).filter((entry) => entry.skill === name);
    expect(publishes[0]!.actor).toBe(`token:oidc:${repository}`);
  });

  it('refuses every bad token with a problem saying which check failed, audited', async () => {
    const repository = `acme/${uniqueName('repo')}`;
    const ns = uniqueName('ci');
    await bind(ns, 'main', { repository, ref: 'refs/heads/main', environment: 'release' });
    const good = { repository, ref: 'refs/heads/main', environment: 'release' };
    const cases: [string, Promise<string>, number, string][] = [
      ['malformed', Promise.resolve('not-a-jwt'), 401, 'not a JWT'],
      [
        'unknown-issuer',
        issuer.sign({ audience: AUDIENCE, claims: good, issuer: 'https://evil.example.com' }),
        401,
        'is not trusted',
      ],
      ['bad-signature', issuer.sign({ audience: AUDIENCE, claims: good, forged: true }), 401, 'signature'],
      ['wrong-audience', issuer.sign({ audience: 'https://other.example', claims: good }), 401, AUDIENCE],
      ['expired', issuer.sign({ audience: AUDIENCE, claims: good, expiresIn: -120 }), 401, 'expired'],
      [
        'not-yet-valid',
        issuer.sign({ audience: AUDIENCE, claims: good, notBefore: 600 }),
        401,
        'not valid yet',
      ],
      [
        'no-binding',
        issuer.sign({ audience: AUDIENCE, claims: { ...good, environment: 'staging' } }),
        403,
        'no namespace trusts',
      ],
      [
        'no-binding',
        issuer.sign({ audience: AUDIENCE, claims: { ...good, ref: 'refs/heads/feature' } }),
        403,
        repository,
      ],
      [
        'missing-claim',
        issuer.sign({ audience: AUDIENCE, claims: { repository: undefined } }),
        401,
        'repository',
      ],
    ];
    for (const [reason, token, status, says] of cases) {
      const problem = expectProblem(await exchange(await token), status);
      expect(problem.reason, reason).toBe(reason);
      expect(problem.detail, reason).toContain(says);
    }
    // The same claims with the bound environment are granted.
    const granted = await exchange(await issuer.sign({ audience: AUDIENCE, claims: good }));
    expect(granted.statusCode, granted.body).toBe(201);
    expect(granted.json().namespaces).toEqual([ns]);

    const refused = (await auditActions('oidc.refused')).map((entry) => entry.detail as { reason: string });
    for (const [reason] of cases) expect(refused.map((entry) => entry.reason)).toContain(reason);
    expectProblem(await app.inject({ method: 'POST', url: '/oidc/exchange', payload: {} }), 400);
  });

  it('follows the issuer rotating its keys', async () => {
    const repository = `acme/${uniqueName('repo')}`;
    const ns = uniqueName('ci');
    await bind(ns, 'main', { repository });
    const claims = { repository };
    expect((await exchange(await issuer.sign({ audience: AUDIENCE, claims }))).statusCode).toBe(201);
    const fetched = issuer.jwksFetches();
    // Known keys are kept: a second exchange fetches nothing.
    expect((await exchange(await issuer.sign({ audience: AUDIENCE, claims }))).statusCode).toBe(201);
    expect(issuer.jwksFetches()).toBe(fetched);
    await issuer.rotate({ dropOld: true });
    const rotated = await exchange(await issuer.sign({ audience: AUDIENCE, claims }));
    expect(rotated.statusCode, rotated.body).toBe(201);
    expect(issuer.jwksFetches()).toBeGreaterThan(fetched);
  });

  it('is off without issuers, and an issuer that cannot be reached is a 503, not a refusal', async () => {
    const off = await registryTrusting({ SKILLREG_OIDC_ISSUERS: '', SKILLREG_PUBLIC_URL: AUDIENCE });
    try {
      const res = await off.inject({
        method: 'POST',
        url: '/oidc/exchange',
        payload: { token: await issuer.sign({ audience: AUDIENCE }) },
      });
      expect(expectProblem(res, 401).detail).toContain('trusted publishing is off');
    } finally {
      await off.close();
    }
    const unreachable = await registryTrusting({
      SKILLREG_OIDC_ISSUERS: 'http://127.0.0.1:9',
      SKILLREG_PUBLIC_URL: AUDIENCE,
    });
    try {
      const res = await unreachable.inject({
        method: 'POST',
        url: '/oidc/exchange',
        payload: { token: await issuer.sign({ audience: AUDIENCE, issuer: 'http://127.0.0.1:9' }) },
      });
      expect(expectProblem(res, 503).detail).toContain('could not be fetched');
    } finally {
      await unreachable.close();
    }
  });
});

describe('skillreg sync --oidc in a GitHub Actions-like job', () => {
  it('publishes with no stored secret, and skillreg verify prints the source repository and commit', async () => {
    // The registry as CI reaches it: listening, its public URL what the client calls (the default audience).
    const live = await registryTrusting({ SKILLREG_OIDC_ISSUERS: issuer.url });
    try {
      const url = await listening(live);
      const ns = uniqueName('ci');
      const repository = `acme/${uniqueName('repo')}`;
      // The admin binds the namespace with the CLI.
      const bound = await runSkillreg(
        ['trusted-publisher', 'add', ns, 'github-main', '--repository', repository, '--issuer', issuer.url],
        { cwd: work, url, token: ADMIN_TOKEN },
      );
      expect(bound.code, showRun(bound)).toBe(0);
      expect(bound.stdout).toContain(`bound ${ns}/github-main: repository=${repository}`);
      const listed = await runSkillreg(['trusted-publisher', 'list', ns, '--json'], {
        cwd: work,
        url,
        token: ADMIN_TOKEN,
      });
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: 'github-main', claims: { repository } }]);
      const root = path.join(work, ns);
      const name = uniqueName('oidc-skill');
      await mkdir(path.join(root, 'skills', name), { recursive: true });
      await writeFile(
        path.join(root, 'skills', name, 'SKILL.md'),
        skillMd({ name, description: 'Drafts changelog entries from merged pull requests.' }),
      );
      const sha = 'feedface'.padEnd(40, '1');
      const job = {
        ACTIONS_ID_TOKEN_REQUEST_URL: issuer.requestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: issuer.requestToken,
        GITHUB_ACTIONS: 'true',
      };
      // The issuer's token endpoint signs with its default claims: this job's repository and commit.
      issuer.defaults.repository = repository;
      issuer.defaults.sha = sha;
      try {
        const synced = await runSkillreg(['sync', root, '--namespace', ns, '--oidc'], {
          cwd: work,
          url,
          env: job,
        });
        expect(synced.code, showRun(synced)).toBe(0);
        expect(synced.stdout).toContain(name);
        expect(synced.stderr).toContain('trusted publishing');

        const again = await runSkillreg(
          ['publish', path.join(root, 'skills', name), '--namespace', ns, '--oidc'],
          { cwd: work, url, env: job },
        );
        expect(again.code, showRun(again)).toBe(0);
        expect(again.stdout).toContain('unchanged');

        const verified = await runSkillreg(['verify', name, '--namespace', ns], { cwd: work, url });
        expect(verified.code, showRun(verified)).toBe(0);
        expect(verified.stdout).toContain(`source repository: ${repository}`);
        expect(verified.stdout).toContain(`source commit: ${sha}`);

        // Outside a CI job there is no ID token to exchange: a clear error, nothing sent.
        const outside = await runSkillreg(['publish', path.join(root, 'skills', name), '--oidc'], {
          cwd: work,
          url,
        });
        expect(outside.code).toBe(1);
        expect(outside.stderr).toContain('ACTIONS_ID_TOKEN_REQUEST_URL');
        // A job whose repository no namespace trusts is refused with the registry's reason.
        issuer.defaults.repository = `${repository}-fork`;
        const refused = await runSkillreg(['sync', root, '--namespace', ns, '--oidc'], {
          cwd: work,
          url,
          env: job,
        });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('no namespace trusts');
        const removed = await runSkillreg(['trusted-publisher', 'remove', ns, 'github-main'], {
          cwd: work,
          url,
          token: ADMIN_TOKEN,
        });
        expect(removed.code, showRun(removed)).toBe(0);
        issuer.defaults.repository = repository;
        const unbound = await runSkillreg(['sync', root, '--namespace', ns, '--oidc'], {
          cwd: work,
          url,
          env: job,
        });
        expect(unbound.code).toBe(1);
        expect(unbound.stderr).toContain('no namespace trusts');
      } finally {
        issuer.defaults.repository = 'acme/skills';
        issuer.defaults.sha = 'a'.repeat(40);
      }
    } finally {
      await live.close();
    }
  });
});
