import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/client.js';
import { isDatabaseUnavailable } from '../../src/http/plugins/error-answers.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, testConfig } from '../helpers/context.js';
import { freePort } from '../helpers/server-process.js';

// PostgreSQL goes away under a running app and comes back: the app must answer 503s quickly (never
// hang, never crash), keep answering /livez, and recover without a restart. The test runs its own
// throwaway PostgreSQL (never the shared one), so it needs the server binaries: initdb, pg_ctl, postgres.

const run = promisify(execFile);

function findServerBinaries(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort((a, b) => Number(b) - Number(a))) {
      candidates.push(path.join(root, version, 'bin'));
    }
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) candidates.push(dir);
  return candidates.find((dir) =>
    ['initdb', 'pg_ctl', 'postgres'].every((binary) => existsSync(path.join(dir, binary))),
  );
}

/** initdb refuses to run as root: as root, run the server binaries as the `postgres` user. */
async function serverUser(): Promise<{ prefix: string[]; uid?: number; gid?: number } | string> {
  if (process.getuid?.() !== 0) return { prefix: [] };
  try {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    if (existsSync('/usr/sbin/runuser') || existsSync('/sbin/runuser')) {
      return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
    }
    return 'running as root without runuser';
  } catch {
    return 'running as root and there is no postgres user to run the server as';
  }
}

class ThrowawayPostgres {
  private constructor(
    private readonly bin: string,
    private readonly prefix: string[],
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(bin: string, user: { prefix: string[]; uid?: number; gid?: number }) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'skillreg-outage-'));
    if (user.uid !== undefined) await chown(dir, user.uid, user.gid!);
    const instance = new ThrowawayPostgres(bin, user.prefix, dir, await freePort());
    // Last resort when the worker exits without afterAll (a crash): never leave a server behind.
    process.once('exit', () => instance.stopNow());
    await instance.exec('initdb', [
      '-D',
      path.join(dir, 'data'),
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    return instance;
  }

  private async exec(binary: string, args: string[]): Promise<void> {
    const [command, ...rest] = [...this.prefix, path.join(this.bin, binary), ...args];
    await run(command!, rest, { cwd: this.dir, timeout: 60_000 });
  }

  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c full_page_writes=off',
    ].join(' ');
    await this.exec('pg_ctl', [
      '-D',
      path.join(this.dir, 'data'),
      '-l',
      path.join(this.dir, 'server.log'),
      '-o',
      options,
      '-w',
      '-t',
      '60',
      'start',
    ]);
  }

  /** Immediate mode: the server drops every connection at once, as a crash would. */
  async stop(): Promise<void> {
    await this.exec('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }

  stopNow(): void {
    const [command, ...rest] = [
      ...this.prefix,
      path.join(this.bin, 'pg_ctl'),
      ...['-D', path.join(this.dir, 'data'), '-m', 'immediate', 'stop'],
    ];
    spawnSync(command!, rest, { stdio: 'ignore', timeout: 10_000 });
  }

  async log(): Promise<string> {
    return readFile(path.join(this.dir, 'server.log'), 'utf8').catch(() => '');
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }
}

const bin = findServerBinaries();
const user = bin ? await serverUser() : 'no PostgreSQL server binaries (initdb, pg_ctl, postgres)';
const skipReason = !bin
  ? 'no PostgreSQL server binaries (initdb, pg_ctl, postgres)'
  : typeof user === 'string'
    ? user
    : '';
if (skipReason) console.log(`[outage] skipped: ${skipReason}; set PG_BIN to the folder holding them`);

/** Elapsed milliseconds of one injected request, with its answer. */
async function timed(
  app: FastifyInstance,
  options: string | InjectOptions,
): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const started = performance.now();
  const res = await app.inject(options);
  return { res, ms: performance.now() - started };
}

function expectUnavailable(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ title: 'Service Unavailable', status: 503, detail: expect.any(String) });
}

const bundleOf = (name: string, body: string) =>
  files({ 'SKILL.md': skillMd({ name, description: 'Published around a database outage.', body }) });

describe.skipIf(skipReason !== '')('PostgreSQL outage (a throwaway server of our own)', () => {
  let postgres: ThrowawayPostgres;
  let app: FastifyInstance;
  const name = uniqueName('outage');
  const figures: Record<string, number> = {};

  beforeAll(async () => {
    postgres = await ThrowawayPostgres.create(bin!, user as { prefix: string[] });
    await postgres.start();
    app = await buildApp({ config: testConfig({ DATABASE_URL: postgres.url }), logger: false });
  }, 120_000);

  afterAll(async () => {
    try {
      // Bounded: a hung close (a leaked pool connection) must not leave the server running.
      await Promise.race([app?.close(), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    } finally {
      await postgres?.destroy();
    }
    if (Object.keys(figures).length > 0) console.log('[outage] figures (ms):', JSON.stringify(figures));
  }, 60_000);

  /** Every pooled connection is back in the pool: none leaked by a request that failed mid-way. */
  async function expectNoLeakedConnections(): Promise<void> {
    const pool = (app.registry.database.db as unknown as { $client: pg.Pool }).$client;
    const deadline = performance.now() + 5_000;
    while (pool.totalCount !== pool.idleCount && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect({ checkedOut: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }).toEqual({
      checkedOut: 0,
      waiting: 0,
    });
  }

  async function waitUntilReady(timeoutMs = 30_000): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      if ((await app.inject('/readyz')).statusCode === 200) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`/readyz not 200 within ${timeoutMs} ms; server log:\n${await postgres.log()}`);
  }

  it('serves normally while the database is up', async () => {
    const res = await publish(app, bundleOf(name, 'one\n'));
    expect(res.statusCode, res.body).toBe(201);
    expect((await app.inject('/readyz')).json()).toEqual({ status: 'ok', database: 'postgres' });
    expect((await app.inject(`/skills/${name}/content`)).statusCode).toBe(200);
  });

  it('when PostgreSQL stops: /readyz 503, writes 503 with Retry-After, reads never hang, /livez 200', async () => {
    await postgres.stop();

    const ready = await timed(app, '/readyz');
    expectUnavailable(ready.res);
    figures.readyz = Math.round(ready.ms);

    const started = performance.now();
    const write = { res: await publish(app, bundleOf(name, 'two\n')), ms: 0 };
    write.ms = performance.now() - started;
    expectUnavailable(write.res);
    expect(Number(write.res.headers['retry-after'])).toBeGreaterThan(0);
    expect(write.res.json().detail).toMatch(/database/);
    figures.publish = Math.round(write.ms);

    const tag = await timed(app, {
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expectUnavailable(tag.res);
    const token = await timed(app, {
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: 'during-outage', scopes: ['read'] },
    });
    expectUnavailable(token.res);

    // A read may be answered from an in-process cache; otherwise it is a 503 problem, never a 500.
    const read = await timed(app, `/skills/${name}/content`);
    expect([200, 503], read.res.body).toContain(read.res.statusCode);
    if (read.res.statusCode === 503) expectUnavailable(read.res);
    figures.read = Math.round(read.ms);
    // The audit log is read straight from the database.
    const audit = await timed(app, { url: '/audit', headers: adminAuth });
    expectUnavailable(audit.res);
    // A token that is not the bootstrap one must be looked up: no database, no answer but 503.
    const lookup = await timed(app, {
      url: '/skills',
      headers: { authorization: 'Bearer skr_needs-a-lookup' },
    });
    expectUnavailable(lookup.res);

    for (const ms of [ready.ms, write.ms, tag.ms, token.ms, read.ms, audit.ms, lookup.ms]) {
      expect(ms).toBeLessThan(6_000); // the pool's connection timeout bounds every wait
    }
    const live = await app.inject('/livez');
    expect(live.statusCode).toBe(200);

    // Still failing the same way a little later: no request hangs on a pool drained by errors.
    const again = await Promise.all(Array.from({ length: 20 }, () => app.inject('/readyz')));
    for (const res of again) expect(res.statusCode).toBe(503);
  });

  it('recovers by itself when PostgreSQL returns: /readyz 200 and publishing works again', async () => {
    await postgres.start();
    figures.recovery = Math.round(await waitUntilReady());
    const res = await publish(app, bundleOf(name, 'two\n'));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().version).toBe('1.0.1');
    const content = await app.inject(`/skills/${name}/content`);
    expect(content.statusCode).toBe(200);
    expect(content.body).toContain('two');
  });

  it('a connection that dies inside a transaction fails that transaction without crashing the process', async () => {
    // Between two statements the connection is checked out of the pool: its 'error' event has no pool
    // listener then, and an unhandled one would take the whole process down.
    const transaction = app.registry.database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      await postgres.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.execute(sql`select 1`);
    });
    await expect(transaction).rejects.toThrow();
    expect(isDatabaseUnavailable(await transaction.catch((error: unknown) => error))).toBe(true);
    expect((await app.inject('/livez')).statusCode).toBe(200);
    await expectNoLeakedConnections();
    expectUnavailable(await app.inject('/readyz'));

    await postgres.start();
    await waitUntilReady();
    const res = await publish(app, bundleOf(name, 'three\n'));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().version).toBe('1.0.2');
  });

  it('publishes in flight when PostgreSQL stops answer 503 (or complete), never hang, leak nothing', async () => {
    // Connections die while requests hold them, wait for them, or send BEGIN on them: a leaked
    // connection would shrink the pool for good. Three rounds, since where each dies is a race.
    let refused = 0;
    for (let round = 0; round < 3; round += 1) {
      const inFlight = Array.from({ length: 30 }, (_, i) =>
        publish(app, bundleOf(name, `round ${round}, in flight ${i}\n`)),
      );
      await new Promise((resolve) => setTimeout(resolve, 10 * round));
      await postgres.stop();
      const answers = await Promise.all(inFlight);
      for (const res of answers) {
        expect([201, 503], res.body).toContain(res.statusCode);
        if (res.statusCode === 503) expectUnavailable(res);
      }
      refused += answers.filter((res) => res.statusCode === 503).length;
      await expectNoLeakedConnections();
      await postgres.start();
      await waitUntilReady();
      await expectNoLeakedConnections();
      // Every publish that answered 201 is stored: none was acknowledged and then lost.
      const versions = ((await app.inject(`/skills/${name}/versions`)).json() as { version: string }[]).map(
        (entry) => entry.version,
      );
      for (const res of answers.filter((answer) => answer.statusCode === 201)) {
        expect(versions).toContain(res.json().version);
      }
    }
    figures.inFlightRefused = refused;
    expect((await publish(app, bundleOf(name, 'after the outages\n'))).statusCode).toBe(201);
  });
});

describe('isDatabaseUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('recognises unreachable-database errors, also when wrapped', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ENOTFOUND',
      'EAI_AGAIN',
      '57P01',
      '57P03',
      '08006',
      '53300',
    ]) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(true);
    }
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    // drizzle wraps the driver's error in `cause`; a connection to several addresses fails as an AggregateError.
    const drizzle = new Error('Failed query: select 1', { cause: withCode('ECONNREFUSED') });
    expect(isDatabaseUnavailable(drizzle)).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED')], 'connect failed'))).toBe(
      true,
    );
  });

  it('leaves every other error alone', () => {
    for (const code of ['23505', '22P02', '42P01', '40001', 'FST_ERR_VALIDATION']) {
      expect(isDatabaseUnavailable(withCode(code, 'something else')), code).toBe(false);
    }
    expect(isDatabaseUnavailable(new Error('Failed query', { cause: withCode('23505') }))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });
});

describe('a database host that accepts connections but never answers', () => {
  it('fails pings and queries within the connection timeout, as unavailable', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket); // accept, then say nothing: a hung server or a half-dead network path
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${port}/x`, poolSize: 2 });
    try {
      const started = performance.now();
      const [ping, query] = await Promise.allSettled([database.ping(), database.db.execute(sql`select 1`)]);
      const elapsed = performance.now() - started;
      console.log(`[outage] silent host detected in ${Math.round(elapsed)} ms`);
      expect(ping.status).toBe('rejected');
      expect(query.status).toBe('rejected');
      expect(isDatabaseUnavailable((ping as PromiseRejectedResult).reason)).toBe(true);
      expect(isDatabaseUnavailable((query as PromiseRejectedResult).reason)).toBe(true);
      expect(elapsed).toBeLessThan(7_000);
    } finally {
      await database.close().catch(() => {});
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
