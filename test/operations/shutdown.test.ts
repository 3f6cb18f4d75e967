import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import { ConsoleBrowser, chromiumInstalled, shot, signIn, watchFailures } from '../console/browser.js';
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
  withMigratedCluster,
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
  await withMigratedCluster(dataDir.path);
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

/**
 * The README's MCP client set-up, run by the clients themselves (pinned in .ci/run; offline with a fresh
 * HOME) against `npm start`: Claude Code connects (its `mcp list` checks each server's health), and
 * Codex reads the TOML. The lines come from test/mcp/client-configs, which client-setup.test.ts holds
 * equal to the README.
 */
const HOSTS_BIN = process.env.SKILLREG_HOSTS_BIN;
if (!HOSTS_BIN) console.warn('[shutdown] SKILLREG_HOSTS_BIN unset: the real MCP client checks are skipped');

describe.skipIf(!HOSTS_BIN)('real MCP clients, set up as the README says, against npm start', () => {
  const configs = path.join(REPO_ROOT, 'test/mcp/client-configs');
  const clientEnv = (home: string, extra: Record<string, string> = {}) => ({
    ...baseEnv({}),
    HOME: home,
    CODEX_HOME: path.join(home, '.codex'),
    PATH: `${HOSTS_BIN}${path.delimiter}${process.env.PATH}`,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  });
  const run = async (script: string, env: Record<string, string>, cwd: string) => {
    const child = spawnCommand(['bash', '-c', script], env, cwd);
    const { code } = await exitOf(child);
    return { code, output: child.output() };
  };

  it('claude mcp add connects with and without the header, refuses a wrong token; codex reads the TOML', async () => {
    const { child, port, tree } = await startServer();
    const homes: Awaited<ReturnType<typeof tempDir>>[] = [];
    try {
      const url = `http://127.0.0.1:${port}`;
      const [plain, withHeader] = readFileSync(path.join(configs, 'claude-code.sh'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('claude '))
        .map((line) => line.replaceAll('http://127.0.0.1:3000', url));
      for (const [line, token, connected] of [
        [plain!, '', true],
        [withHeader!, ADMIN_TOKEN, true],
        [withHeader!, 'skr_not-a-token-of-this-registry', false],
      ] as const) {
        const home = await tempDir('skillreg-claude-home-');
        homes.push(home);
        const env = clientEnv(home.path, { SKILLREG_TOKEN: token });
        const added = await run(line, env, home.path);
        expect(added.code, added.output).toBe(0);
        const listed = await run('claude mcp list', env, home.path);
        expect(listed.output).toContain(`skills: ${url}/mcp (HTTP)`);
        expect(listed.output.includes('✔ Connected'), listed.output).toBe(connected);
      }

      const home = await tempDir('skillreg-codex-home-');
      homes.push(home);
      mkdirSync(path.join(home.path, '.codex'));
      writeFileSync(
        path.join(home.path, '.codex/config.toml'),
        readFileSync(path.join(configs, 'codex.toml'), 'utf8').replaceAll('http://127.0.0.1:3000', url),
      );
      const listed = await run('codex mcp list --json 2>/dev/null', clientEnv(home.path), home.path);
      expect(listed.code, listed.output).toBe(0);
      const servers = JSON.parse(listed.output.slice(listed.output.indexOf('['))) as {
        name: string;
        transport: { type: string; url: string; bearer_token_env_var: string | null };
      }[];
      expect(servers).toEqual([
        expect.objectContaining({
          name: 'skills',
          transport: expect.objectContaining({
            type: 'streamable_http',
            url: `${url}/mcp`,
            bearer_token_env_var: 'SKILLREG_TOKEN',
          }),
        }),
      ]);
    } finally {
      child.kill('SIGTERM');
      await exitOf(child);
      await allGone(tree, 10_000);
      for (const home of homes) await home.remove();
    }
  }, 180_000);
});

describe.skipIf(!chromiumInstalled)('the first screen of npm start in Chromium', () => {
  it('GET / leads to the console, where a bogus token is refused and the admin token signs in', async () => {
    const { child, port, tree } = await startServer();
    const browser = await ConsoleBrowser.launch();
    try {
      const page = await browser.open();
      const failures = watchFailures(page);
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.getByRole('link', { name: 'API docs' }).waitFor();
      await shot(page, 'npm-start-home');
      await page.getByRole('link', { name: 'Open the console' }).click();
      await page.waitForURL(`http://127.0.0.1:${port}/ui`);
      await page
        .getByRole('form', { name: 'Sign in' })
        .getByLabel('Token')
        .fill('skr_bogus-token-0123456789');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/refused \(401\)/).waitFor();
      await signIn(page);
      await shot(page, 'npm-start-console');
      // The one refused sign-in is the only failed request: the page's CSP let everything else load.
      expect(failures.requests.filter((line) => !line.includes('/auth/whoami'))).toEqual([]);
      expect(failures.console.filter((line) => !line.includes('401'))).toEqual([]);
    } finally {
      await browser.close();
      child.kill('SIGTERM');
      await exitOf(child);
      await allGone(tree, 10_000);
    }
  }, 120_000);
});
