import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, loggerOptions } from '../../src/app.js';
import type { Scope } from '../../src/storage/tokens-repository.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestDatabase, type TestDatabase, testConfig } from '../helpers/context.js';
import { sha256Hex } from '../helpers/hashing.js';
import { REPO_ROOT } from '../helpers/server-process.js';

// Secrets in request logs (admin token, created tokens) are covered by auth.test.ts; this file checks
// request ids, the redaction paths themselves, the security events logged at warn, and the
// terminal-or-JSON decision.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let testDatabase: TestDatabase;
let app: Awaited<ReturnType<typeof buildApp>>;
let close: () => Promise<void>;
const lines: Record<string, unknown>[] = [];

// An external scanner that blocks what says BLOCK-AT-PUBLISH at once, and what says BLOCK-ON-RESCAN
// once the flag file exists: a quarantined publish, and a version a later rescan blocks.
const scannerDir = mkdtempSync(path.join(tmpdir(), 'skillreg-logging-'));
const rescanFlag = path.join(scannerDir, 'block-now');
const scanner = path.join(scannerDir, 'scanner.sh');
writeFileSync(
  scanner,
  `#!/bin/sh
if grep -rq 'BLOCK-AT-PUBLISH' "$1"; then
  echo '[{"rule":"ext/publish-rule","severity":"critical","path":"SKILL.md","line":1,"detail":"known bad"}]'
elif [ -f '${rescanFlag}' ] && grep -rq 'BLOCK-ON-RESCAN' "$1"; then
  echo '[{"rule":"ext/rescan-rule","severity":"critical","path":"SKILL.md","line":1,"detail":"now known bad"},{"rule":"ext/rescan-rule","severity":"high","path":"SKILL.md","line":2,"detail":"again"}]'
else
  echo '[]'
fi
`,
  { mode: 0o755 },
);

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  const database = await testDatabase.open();
  const config = testConfig({ LOG_LEVEL: 'info', SKILLREG_SCANNER_CMD: scanner });
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  // The production options (redaction included) with our stream in place of stdout.
  const { transport: _transport, ...production } = loggerOptions(config) as Record<string, unknown>;
  app = await buildApp({ config, database, logger: { ...production, level: 'info', stream } });
  close = async () => {
    await app.close();
    await database.close();
    await testDatabase.drop();
    rmSync(scannerDir, { recursive: true, force: true });
  };
});
afterAll(async () => close?.());

const linesOf = (reqId: string) => lines.filter((line) => line.reqId === reqId);

describe('request ids', () => {
  it('honours an incoming x-request-id: echoed and on every log line of the request', async () => {
    const id = 'lb-7f3a.trace:42_x';
    const res = await app.inject({ url: '/skills', headers: { 'x-request-id': id } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe(id);
    const logged = linesOf(id);
    expect(logged.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(logged[1]).toMatchObject({ res: { statusCode: 200 } });
  });

  it('generates a UUID when there is none, and replaces one that could forge log lines', async () => {
    const first = await app.inject('/skills');
    const second = await app.inject('/skills');
    const generated = first.headers['x-request-id'] as string;
    expect(generated).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).not.toBe(generated);
    expect(linesOf(generated)).toHaveLength(2);

    for (const hostile of ['two words', 'x'.repeat(129), 'id"}{"level":60', 'é']) {
      const res = await app.inject({ url: '/skills', headers: { 'x-request-id': hostile } });
      expect(res.headers['x-request-id'], hostile).toMatch(UUID);
      expect(linesOf(hostile)).toHaveLength(0);
    }
  });

  it('echoes the id on errors too', async () => {
    const res = await app.inject({ url: '/skills/no-such-skill-here', headers: { 'x-request-id': 'err-1' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toBe('err-1');
    expect(linesOf('err-1').at(-1)).toMatchObject({ res: { statusCode: 404 } });
  });
});

describe('redaction', () => {
  it('censors authorization and cookie headers wherever the logger options name them', () => {
    const secret = 'Bearer skr_do-not-log-me';
    app.log.info({ headers: { authorization: secret, accept: 'text/plain' } }, 'headers logged');
    app.log.info({ req: { headers: { authorization: secret, cookie: 'sid=1' } } }, 'request logged');
    const logged = lines.filter((line) => line.msg === 'headers logged' || line.msg === 'request logged');
    expect(logged).toHaveLength(2);
    expect(JSON.stringify(logged)).not.toContain('do-not-log-me');
    expect(logged[0]).toMatchObject({ headers: { authorization: '[redacted]', accept: 'text/plain' } });
  });
});

describe('security events (warn, with the request id, never a secret)', () => {
  const WARN = 40;
  const createToken = (name: string, scopes: Scope[], namespaces?: string[]) =>
    app.registry.repositories.tokens.create({ name, scopes, namespaces, actor: 'test' });
  const eventsOf = (reqId: string, event: string) => linesOf(reqId).filter((line) => line.event === event);
  /** The whole log so far, as written. */
  const logText = () => JSON.stringify(lines);
  const fingerprint = (secret: string) => sha256Hex(secret).slice(0, 8);

  it('a quarantined publish: namespace, skill, version, rules, findings and the token name, once', async () => {
    const ci = await createToken(uniqueName('ci-quarantine'), ['publish']);
    const name = uniqueName('held');
    const bundle = files({
      'SKILL.md': skillMd({ name, description: 'Held at publish.', body: 'BLOCK-AT-PUBLISH\n' }),
    });
    const reqId = uniqueName('quarantine');
    const res = await publish(app, bundle, {
      headers: { authorization: `Bearer ${ci.secret}`, 'x-request-id': reqId },
    });
    expect(res.statusCode, res.body).toBe(422);
    const logged = eventsOf(reqId, 'publish.quarantined');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: WARN,
      namespace: 'default',
      skill: name,
      version: '1.0.0',
      rules: ['ext/publish-rule'],
      findings: 1,
      token: ci.name,
      created: true,
    });
    // Publishing the same held content again is refused again, and logged again (not stored again).
    const againId = uniqueName('quarantine-again');
    const again = await publish(app, bundle, {
      headers: { authorization: `Bearer ${ci.secret}`, 'x-request-id': againId },
    });
    expect(again.statusCode).toBe(422);
    expect(eventsOf(againId, 'publish.quarantined')).toEqual([
      expect.objectContaining({ skill: name, version: '1.0.0', created: false }),
    ]);
    expect(logText()).not.toContain(ci.secret);
  });

  it('a refused token: why, with the token name when the secret is a token, a fingerprint otherwise', async () => {
    const unknown = `skr_never-issued-${uniqueName('secret')}`;
    const unknownId = uniqueName('unknown');
    const refused = await app.inject({
      url: '/skills?limit=1&note=private',
      headers: { authorization: `Bearer ${unknown}`, 'x-request-id': unknownId },
    });
    expect(refused.statusCode).toBe(401);
    const [line] = eventsOf(unknownId, 'auth.refused');
    expect(line).toMatchObject({
      level: WARN,
      reason: 'unknown',
      credential: fingerprint(unknown),
      method: 'GET',
      url: '/skills',
    });
    expect(line).not.toHaveProperty('token');

    const revoked = await createToken(uniqueName('ci-revoked'), ['publish']);
    await app.registry.repositories.tokens.revoke(revoked.id, 'test');
    const expired = await app.registry.repositories.tokens.create({
      name: uniqueName('ci-expired'),
      scopes: ['publish'],
      expiresAt: new Date(Date.now() - 1_000),
      actor: 'test',
    });
    const reader = await createToken(uniqueName('reader'), ['read']);
    const teamOnly = await createToken(uniqueName('team-ci'), ['publish'], ['team-*']);
    const cases = [
      { token: revoked, reason: 'revoked', status: 401 },
      { token: expired, reason: 'expired', status: 401 },
      { token: reader, reason: 'scope', status: 403, extra: { requiredScope: 'publish', scopes: ['read'] } },
      { token: teamOnly, reason: 'namespace', status: 403, extra: { namespace: 'default' } },
    ];
    for (const { token, reason, status, extra } of cases) {
      const reqId = uniqueName(reason);
      const res = await publish(app, files({ 'SKILL.md': skillMd({ name: uniqueName('nope') }) }), {
        headers: { authorization: `Bearer ${token.secret}`, 'x-request-id': reqId },
      });
      expect(res.statusCode, reason).toBe(status);
      const logged = eventsOf(reqId, 'auth.refused');
      expect(logged, reason).toHaveLength(1);
      expect(logged[0], reason).toMatchObject({
        level: WARN,
        reason,
        token: token.name,
        method: 'POST',
        url: '/skills',
        ...extra,
      });
      expect(logged[0], reason).not.toHaveProperty('credential');
    }

    const malformedId = uniqueName('malformed');
    const digest = 'Digest username="user", response="do-not-log-this-response"';
    await app.inject({ url: '/skills', headers: { authorization: digest, 'x-request-id': malformedId } });
    expect(eventsOf(malformedId, 'auth.refused')[0]).toMatchObject({
      reason: 'malformed',
      credential: fingerprint(digest),
    });
    // HTTP Basic presents its password as the token (as git sends it): an unknown one, fingerprinted.
    const basicId = uniqueName('basic');
    const basic = `Basic ${Buffer.from('user:do-not-log-this-password').toString('base64')}`;
    await app.inject({ url: '/skills', headers: { authorization: basic, 'x-request-id': basicId } });
    expect(eventsOf(basicId, 'auth.refused')[0]).toMatchObject({
      reason: 'unknown',
      credential: fingerprint('do-not-log-this-password'),
    });

    // A request without credentials is refused, but no token was: nothing to log at warn.
    const anonymousId = uniqueName('anonymous');
    const anonymous = await publish(app, files({ 'SKILL.md': skillMd({ name: uniqueName('anon') }) }), {
      headers: { 'x-request-id': anonymousId },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(eventsOf(anonymousId, 'auth.refused')).toEqual([]);

    const text = logText();
    for (const secret of [
      unknown,
      revoked.secret,
      expired.secret,
      reader.secret,
      teamOnly.secret,
      basic,
      'do-not-log-this-password',
      'do-not-log-this-response',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain(Buffer.from('user:do-not-log-this-password').toString('base64'));
  });

  it('a rescan that blocks: one line per newly blocked version, naming the token that ran it', async () => {
    const names = [uniqueName('later-a'), uniqueName('later-b')];
    for (const name of names) {
      const body = 'BLOCK-ON-RESCAN\n';
      const res = await publish(app, files({ 'SKILL.md': skillMd({ name, description: 'Later.', body }) }), {
        headers: adminAuth,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const ops = await createToken(uniqueName('ops-admin'), ['admin']);
    writeFileSync(rescanFlag, '');
    try {
      const reqId = uniqueName('rescan');
      const res = await app.inject({
        method: 'POST',
        url: '/admin/rescan',
        headers: { authorization: `Bearer ${ops.secret}`, 'x-request-id': reqId },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().quarantinedCount).toBe(2);
      const logged = eventsOf(reqId, 'rescan.blocked');
      expect(logged.map((line) => line.skill).sort()).toEqual([...names].sort());
      for (const line of logged) {
        expect(line).toMatchObject({
          level: WARN,
          namespace: 'default',
          version: '1.0.0',
          rules: ['ext/rescan-rule'],
          findings: 2,
          token: ops.name,
        });
      }
      expect(logText()).not.toContain(ops.secret);
    } finally {
      rmSync(rescanFlag, { force: true });
    }
  });
});

describe('terminal or JSON', () => {
  const descriptor = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
  afterEach(() => {
    if (descriptor) Object.defineProperty(process.stdout, 'isTTY', descriptor);
    else delete (process.stdout as { isTTY?: boolean }).isTTY;
    vi.unstubAllEnvs();
  });
  const withTty = (isTTY: boolean) =>
    Object.defineProperty(process.stdout, 'isTTY', { value: isTTY, configurable: true });
  const transportOf = () => (loggerOptions(testConfig()) as { transport?: { target: string } }).transport;

  it('is pino-pretty for a person at a terminal, JSON otherwise and always in production', () => {
    vi.stubEnv('NODE_ENV', 'development');
    withTty(true);
    expect(transportOf()?.target).toBe('pino-pretty');
    withTty(false);
    expect(transportOf()).toBeUndefined();
    vi.stubEnv('NODE_ENV', 'production');
    withTty(true);
    expect(transportOf()).toBeUndefined();
  });

  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)('prints pretty lines under a real pseudo-terminal', () => {
    const program = [
      "import pino from 'pino';",
      "import { loggerOptions } from './src/app.ts';",
      "import { loadConfig } from './src/config.ts';",
      'const log = pino(loggerOptions(loadConfig({})));',
      "log.info({ reqId: 'pty-1' }, 'hello from a terminal');",
    ].join(' ');
    const command = `${process.execPath} --import tsx --input-type=module -e "${program}"`;
    const run = (nodeEnv: string) =>
      spawnSync('script', ['-qec', command, '/dev/null'], {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_ENV: nodeEnv, NODE_OPTIONS: '' },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const pretty = run('development');
    expect(pretty.status, pretty.stderr).toBe(0);
    const line = pretty.stdout.split(/\r?\n/).find((text) => text.includes('hello from a terminal'));
    expect(line, pretty.stdout).toBeDefined();
    expect(line!.trim().startsWith('{')).toBe(false);
    expect(line).toContain('INFO');

    const json = run('production');
    const jsonLine = json.stdout.split(/\r?\n/).find((text) => text.includes('hello from a terminal'));
    expect(JSON.parse(jsonLine!)).toMatchObject({ level: 30, reqId: 'pty-1', msg: 'hello from a terminal' });
  });
});
