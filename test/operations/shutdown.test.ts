import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestDatabase, type TestDatabase } from '../helpers/context.js';
import {
  allGone,
  baseEnv,
  connectionRefused,
  descendantsOf,
  exitOf,
  freePort,
  processRunning,
  REPO_ROOT,
  spawnCommand,
  tempDir,
  waitForLive,
} from '../helpers/server-process.js';

// The real processes a process manager holds: `npm start` (its prestart compiles src/ into dist/, then
// start execs the compiled server), `npx skillreg serve` and `skillreg serve`. SIGTERM or SIGINT to that
// very process must let an in-flight request finish (including its database write), refuse new
// connections, and leave no process of the tree running after the drain time (10 s).

const NPM_START = ['npm', 'start'];
let testDatabase: TestDatabase;
let dataDir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  testDatabase = await createTestDatabase();
  dataDir = await tempDir('skillreg-shutdown-');
  // What `npm start` runs first.
  const build = spawnCommand(['npm', 'run', 'prestart'], { ...process.env });
  const { code } = await exitOf(build);
  if (code !== 0) throw new Error(`npm run prestart failed:\n${build.output()}`);
}, 180_000);
afterAll(async () => {
  await testDatabase?.drop();
  await dataDir?.remove();
});

async function startServer(command: string[] = NPM_START) {
  const port = await freePort();
  const env = baseEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    SKILLREG_DATA_DIR: dataDir.path,
    SKILLREG_SEED_DIR: '',
    SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(testDatabase.url ? { DATABASE_URL: testDatabase.url } : {}),
  });
  const child = spawnCommand(command, env);
  await waitForLive(`http://127.0.0.1:${port}`, child);
  // Everything the signalled process started (npm's shell is the exec'd node), seen before the signal.
  const tree = [child.pid!, ...descendantsOf(child.pid!)];
  expect(tree.length).toBeGreaterThanOrEqual(command === NPM_START ? 2 : 1);
  return { child, port, tree };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('SIGTERM', () => {
  it('drains an in-flight upload, refuses new connections, and exits 0 within 10 s', async () => {
    const name = uniqueName('drained');
    const archive = await writeTarGz(
      files({
        'SKILL.md': skillMd({ name, description: 'Published while the server shuts down.' }),
        'references/padding.txt': 'x'.repeat(200_000),
      }),
    );
    const { child, port, tree } = await startServer();
    // A keep-alive agent, as a load balancer would hold its connections.
    const agent = new http.Agent({ keepAlive: true });
    try {
      let answered!: (answer: Answer) => void;
      let failed!: (error: Error) => void;
      const answer = new Promise<Answer>((resolve, reject) => {
        answered = resolve;
        failed = reject;
      });
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/skills',
          agent,
          headers: {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            'content-type': 'application/gzip',
            'content-length': archive.length,
          },
        },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('end', () =>
            answered({ status: response.statusCode!, headers: response.headers, body }),
          );
        },
      );
      request.on('error', failed);
      // Half the body now: the request is in flight when the signal arrives.
      const half = Math.floor(archive.length / 2);
      request.write(archive.subarray(0, half));
      await new Promise((resolve) => setTimeout(resolve, 300));

      const signalled = Date.now();
      child.kill('SIGTERM');
      // The listening socket closes at once: new connections are refused while the upload still runs.
      let refused = false;
      while (!refused && Date.now() - signalled < 5_000) {
        refused = await connectionRefused(port);
        if (!refused) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(refused, child.output()).toBe(true);
      expect(child.exitCode).toBeNull();

      // The rest of the body, slowly: the upload completes and is stored after the signal.
      await new Promise((resolve) => setTimeout(resolve, 500));
      request.end(archive.subarray(half));
      const { status, body } = await answer;
      expect(status, body).toBe(201);
      expect(JSON.parse(body)).toMatchObject({ name, version: '1.0.0', created: true });

      await exitOf(child);
      expect(await allGone(tree, 10_000), child.output()).toBeLessThan(10_000 - (Date.now() - signalled));
      expect(child.output()).toContain('shutting down');
      expect(child.output()).not.toContain('shutdown timed out');
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
    }

    // The publish that finished during the drain was committed: a fresh process serves it.
    const restarted = await startServer();
    try {
      const res = await fetch(`http://127.0.0.1:${restarted.port}/skills/${name}/content`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Do the thing');
    } finally {
      restarted.child.kill('SIGTERM');
      await exitOf(restarted.child);
      expect(await allGone(restarted.tree, 10_000)).toBeLessThan(10_000);
    }
  }, 180_000);
});

describe('every way the service is started stops with its process tree', () => {
  const SKILLREG = path.join(REPO_ROOT, 'bin/skillreg.js');
  const cases: { how: string; command: string[]; stop: (child: ChildProcess) => void; code?: number }[] = [
    { how: 'SIGINT to npm start', command: NPM_START, stop: (child) => child.kill('SIGINT') },
    {
      how: 'SIGTERM to skillreg serve',
      command: [process.execPath, SKILLREG, 'serve'],
      stop: (child) => child.kill('SIGTERM'),
      code: 0,
    },
    {
      how: 'SIGTERM to npx skillreg serve (a shell between npx and node)',
      command: ['npx', '--no-install', 'skillreg', 'serve'],
      stop: (child) => child.kill('SIGTERM'),
    },
    {
      how: 'SIGKILL to npm start (nothing left to pass a signal on)',
      command: NPM_START,
      stop: (child) => child.kill('SIGKILL'),
    },
  ];
  for (const { how, command, stop, code } of cases) {
    it(how, async () => {
      const { child, port, tree } = await startServer(command);
      try {
        const signalled = Date.now();
        stop(child);
        const exit = await exitOf(child);
        if (code !== undefined) expect(exit.code, child.output()).toBe(code);
        const took = await allGone(tree, 10_000);
        expect(took, `${child.output()}\nstill running: ${tree.filter(processRunning)}`).toBeLessThan(10_000);
        expect(Date.now() - signalled).toBeLessThan(10_000);
        expect(await connectionRefused(port)).toBe(true);
      } finally {
        for (const pid of tree.filter(processRunning)) process.kill(pid, 'SIGKILL');
      }
    }, 120_000);
  }
});
