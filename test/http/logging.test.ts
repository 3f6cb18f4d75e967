import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, loggerOptions } from '../../src/app.js';
import { createTestDatabase, type TestDatabase, testConfig } from '../helpers/context.js';
import { REPO_ROOT } from '../helpers/server-process.js';

// Secrets in request logs (admin token, created tokens) are covered by auth.test.ts; this file checks
// request ids, the redaction paths themselves, and the terminal-or-JSON decision.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let testDatabase: TestDatabase;
let app: Awaited<ReturnType<typeof buildApp>>;
let close: () => Promise<void>;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  const database = await testDatabase.open();
  const config = testConfig({ LOG_LEVEL: 'info' });
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
