import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestDatabase, type TestDatabase } from '../helpers/context.js';
import {
  baseEnv,
  connectionRefused,
  exitOf,
  freePort,
  REPO_ROOT,
  spawnCommand,
  tempDir,
  waitForLive,
} from '../helpers/server-process.js';

// The real process, started as `npm start` starts it (its prestart compiles src/ into dist/, then
// start runs the compiled server; deploy.test.ts does the same with the image's command): SIGTERM must
// let an in-flight request finish (including its database write), refuse new connections, and exit 0
// within 10 seconds.

const scripts = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts as Record<
  string,
  string
>;
const [bin, ...args] = scripts.start!.split(' ');
const cmd = [bin === 'node' ? process.execPath : path.join(REPO_ROOT, 'node_modules/.bin', bin!), ...args];

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

async function startServer() {
  const port = await freePort();
  const env = baseEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    SKILLREG_DATA_DIR: dataDir.path,
    SKILLREG_SEED_DIR: '',
    SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(testDatabase.url ? { DATABASE_URL: testDatabase.url } : {}),
  });
  const child = spawnCommand(cmd, env);
  await waitForLive(`http://127.0.0.1:${port}`, child);
  return { child, port };
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
    const { child, port } = await startServer();
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

      const { code } = await exitOf(child);
      expect(code, child.output()).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(child.output()).toContain('shutting down');
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
      expect((await exitOf(restarted.child)).code).toBe(0);
    }
  }, 120_000);
});
