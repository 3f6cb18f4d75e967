import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/context.js';
import {
  baseEnv,
  connectionRefused,
  exitOf,
  freePort,
  layOutImage,
  REPO_ROOT,
  readDockerfile,
  runToExit,
  spawnCommand,
  tempDir,
  waitForLive,
} from '../helpers/server-process.js';

// No Docker engine runs in CI, so the image and the compose file are checked by reading them, and the
// image's own CMD and HEALTHCHECK commands are run here as they are written.

const dockerfile = readDockerfile();

/** Debian's tini stands in for the image's; `unshare --pid` needs root (as in CI). */
const TINI = ['/usr/bin/tini', '/sbin/tini'].find((file) => existsSync(file));
const canRunAsPid1 =
  TINI !== undefined &&
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;
if (!canRunAsPid1) {
  console.warn(
    '[deploy] tini or unshare --pid unavailable: the PID 1 test is skipped (apt-get install tini)',
  );
}
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** .dockerignore semantics for top-level names: the last matching pattern wins, `!` re-includes. */
function dockerIgnored(name: string): boolean {
  let ignored = false;
  for (const raw of read('.dockerignore').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
    const regex = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
    if (regex.test(name)) ignored = !negated;
  }
  return ignored;
}

/** KEY=VALUE lines of an env file. */
function envFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) values[match[1]!] = match[2]!;
  }
  return values;
}

describe('Dockerfile', () => {
  it('builds in stages and runs as a non-root user with production dependencies only', () => {
    const froms = dockerfile.instructions.filter((i) => i.keyword === 'FROM');
    expect(froms.map((from) => from.args.split(/\s+AS\s+/i)[1])).toEqual(['build', 'deps', 'runtime']);
    expect(froms.at(-1)!.args).toMatch(/alpine/);
    const installs = dockerfile.instructions.filter((i) => i.keyword === 'RUN' && /npm ci/.test(i.args));
    expect(installs.map((i) => i.args)).toEqual([
      expect.stringContaining('--ignore-scripts'),
      expect.stringMatching(/--omit=dev.*--ignore-scripts|--ignore-scripts.*--omit=dev/),
    ]);
    const users = dockerfile.runtime.filter((i) => i.keyword === 'USER');
    expect(users.at(-1)?.args).toBe('node');
  });

  it('runs an upstream LTS line of Node, the one the README names, with tini as PID 1', () => {
    const nodeVersion = dockerfile.instructions.find(
      (i) => i.keyword === 'ARG' && i.args.startsWith('NODE_VERSION='),
    );
    const line = Number(nodeVersion?.args.split('=')[1]);
    // Even-numbered lines become LTS; 20 reached its end of life in April 2026.
    expect(line % 2).toBe(0);
    expect(line).toBeGreaterThanOrEqual(22);
    expect(read('README.md')).toContain(`the image runs Node.js ${line}`);
    expect(dockerfile.entrypoint).toEqual(['/sbin/tini', '--']);
    const runs = dockerfile.runtime.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs).toContain('apk add --no-cache tini git');
  });

  it('carries the skillreg command on the PATH', () => {
    const runs = dockerfile.runtime.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs).toContain('ln -s /app/bin/skillreg.js /usr/local/bin/skillreg');
    expect(dockerfile.runtime.map((i) => i.args)).toContain('bin ./bin');
  });

  it('listens on every interface in production mode, with the database folder writable', () => {
    expect(dockerfile.env).toMatchObject({ HOST: '0.0.0.0', PORT: '3000', NODE_ENV: 'production' });
    expect(dockerfile.env.SKILLREG_DATA_DIR).toBe('/data');
    const runs = dockerfile.runtime.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((run) => run.includes('chown node:node /data'))).toBe(true);
    // The image's environment is a valid configuration.
    expect(() => loadConfig(dockerfile.env)).not.toThrow();
  });

  it('copies the compiled code, the migrations and the seed skills, and the build context sends them', () => {
    const runtimeCopies = dockerfile.runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(runtimeCopies).toEqual(
      expect.arrayContaining([
        '--from=deps /app/node_modules ./node_modules',
        '--from=build /app/dist ./dist',
        'migrations ./migrations',
        'skills-seed ./skills-seed',
      ]),
    );
    const sources = dockerfile.instructions
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
    ]) {
      expect(sources, needed).toContain(needed);
    }
    for (const source of sources) {
      expect(existsSync(path.join(REPO_ROOT, source)), source).toBe(true);
      expect(dockerIgnored(source), `${source} is excluded by .dockerignore`).toBe(false);
    }
    for (const secretOrBulk of ['.env', '.data', 'node_modules', '.git', 'test', 'dist']) {
      expect(dockerIgnored(secretOrBulk), secretOrBulk).toBe(true);
    }
  });

  it('runs the compiled server, whose migrations resolve as in the repository', () => {
    expect(dockerfile.cmd).toEqual(['node', '--max-semi-space-size=4', 'dist/server.js']);
    const build = dockerfile.instructions.find((i) => i.keyword === 'RUN' && i.args === 'npm run build');
    expect(build).toBeDefined();
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    // npm start runs what the image runs, compiled by its prestart: no transpiler in the process, so
    // the memory budget (docs/DEPLOY.md) holds for both.
    // `exec`: npm passes SIGTERM to the script's shell, which then is node itself (shutdown.test.ts).
    expect(pkg.scripts.start).toBe(`exec ${dockerfile.cmd.join(' ')}`);
    // The prestart compiles with the same tsconfig as `npm run build`, skipped when dist/ is up to date.
    expect(pkg.scripts.prestart).toBe('exec node bin/build-if-stale.js');
    expect(read('bin/build-if-stale.js')).toContain("'-p', 'tsconfig.build.json'");
    // rootDir src -> outDir dist: dist/db/client.js sits where src/db/client.ts does, so its
    // ../../migrations is /app/migrations in the image.
    const tsconfig = JSON.parse(read('tsconfig.build.json'));
    expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(read('src/db/client.ts')).toContain("new URL('../../migrations', import.meta.url)");
  });

  it('knows when dist/ holds the sources as they are: npm start and skillreg in a clone skip tsc and tsx', async () => {
    // The run's compile (test/helpers/global-setup.ts), redone only if a source changed since.
    expect(spawnSync(process.execPath, ['bin/build-if-stale.js'], { cwd: REPO_ROOT }).status).toBe(0);
    const stateModule = path.join(REPO_ROOT, 'bin/dist-state.js');
    const { distIsFresh } = (await import(stateModule)) as { distIsFresh: (entry: string) => boolean };
    expect(distIsFresh('dist/server.js')).toBe(true);
    expect(distIsFresh('dist/cli/main.js')).toBe(true);
    // An entry point that is not there is never fresh: the prestart compiles, skillreg runs the sources.
    expect(distIsFresh('dist/no-such-entry.js')).toBe(false);
  });

  it('checks /livez with Node itself (no curl in the image)', () => {
    expect(dockerfile.healthcheck).toEqual([
      'node',
      '-e',
      "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))",
    ]);
    expect(dockerfile.healthcheckOptions).toMatch(/--interval=\d+s/);
    expect(dockerfile.healthcheckOptions).toMatch(/--timeout=\d+s/);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'));
  /** A compose interpolation, `${...}`, written as it appears in the file. */
  const variable = (expression: string) => `\${${expression}}`;

  it('runs PostgreSQL on a named volume with a pg_isready healthcheck', () => {
    const postgres = compose.services.postgres;
    expect(postgres.image).toMatch(/^postgres:\d+/);
    expect(postgres.volumes).toContain('pgdata:/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes)).toContain('pgdata');
    const test = postgres.healthcheck.test as string[];
    expect(test[0]).toBe('CMD-SHELL');
    expect(test[1]).toMatch(/^pg_isready -U skillreg -d skillreg$/);
    expect(postgres.environment).toMatchObject({ POSTGRES_USER: 'skillreg', POSTGRES_DB: 'skillreg' });
    expect(postgres.ports).toBeUndefined(); // the database is not published
  });

  it('starts the registry once PostgreSQL is healthy, with the database URL, port and env file', () => {
    const registry = compose.services.registry;
    expect(registry.build).toBe('.');
    expect(registry.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const url = new URL(
      (registry.environment.DATABASE_URL as string).replace(
        variable('POSTGRES_PASSWORD:-skillreg'),
        'secret',
      ),
    );
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(compose.services.postgres.environment.POSTGRES_USER);
    expect(url.pathname).toBe(`/${compose.services.postgres.environment.POSTGRES_DB}`);
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toBe(
      variable('POSTGRES_PASSWORD:-skillreg'),
    );
    expect(registry.environment).toMatchObject({ HOST: '0.0.0.0', PORT: '3000' });
    expect(registry.ports).toEqual([`${variable('SKILLREG_PORT:-3000')}:3000`]);
    expect(registry.env_file).toEqual([{ path: '.env', required: false }]);
    // Longer than the 10 s drain, so SIGKILL never cuts a drain short.
    expect(Number.parseInt(registry.stop_grace_period, 10)).toBeGreaterThan(10);
  });

  it('.env.example lists the settings, is a valid configuration once filled, and .env stays out of Git', () => {
    const example = envFile(read('.env.example'));
    expect(Object.keys(example)).toEqual(
      expect.arrayContaining(['SKILLREG_ADMIN_TOKEN', 'POSTGRES_PASSWORD', 'SKILLREG_PORT']),
    );
    expect(example.SKILLREG_ADMIN_TOKEN).toBe(''); // no default secret
    // As committed (token empty) and as filled in, the registry's configuration loads.
    expect(() => loadConfig({ ...example, ...dockerfile.env })).not.toThrow();
    const filled = {
      ...example,
      SKILLREG_ADMIN_TOKEN: 'a'.repeat(64),
      DATABASE_URL: 'postgres://u:p@postgres/db',
    };
    expect(loadConfig({ ...dockerfile.env, ...filled }).adminToken).toBe('a'.repeat(64));
    expect(read('.gitignore').split('\n')).toContain('.env');
  });
});

describe("the image's commands, run here", () => {
  let testDatabase: TestDatabase;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let workdir: Awaited<ReturnType<typeof tempDir>>;
  let build: { code: number | null; output: string };
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    dataDir = await tempDir('skillreg-deploy-data-');
    // The image's /app: `npm run build` output, node_modules, package.json, migrations, skills-seed.
    workdir = await tempDir('skillreg-deploy-app-');
    ({ build } = await layOutImage(dockerfile, workdir.path));
  }, 180_000);
  afterAll(async () => {
    await testDatabase?.drop();
    await dataDir?.remove();
    await workdir?.remove();
  });

  /** The image's environment on this port: PostgreSQL as in compose when the tests have one, else PGlite. */
  const imageEnv = (port: number) =>
    baseEnv({
      ...dockerfile.env,
      PORT: String(port),
      SKILLREG_DATA_DIR: dataDir.path,
      ...(testDatabase.url ? { DATABASE_URL: testDatabase.url } : {}),
    });

  it('npm run build compiles', () => {
    expect(build.code, build.output).toBe(0);
    expect(existsSync(path.join(workdir.path, 'dist/server.js'))).toBe(true);
  });

  it('skillreg runs from the compiled code the image carries', async () => {
    expect(build.code, build.output).toBe(0);
    expect(existsSync(path.join(workdir.path, 'src/cli'))).toBe(false);
    const skillreg = [process.execPath, path.join(workdir.path, 'bin/skillreg.js')];
    const version = spawnCommand([...skillreg, '-V'], baseEnv({}), workdir.path);
    expect((await exitOf(version)).code, version.output()).toBe(0);
    expect(version.output().trim()).toBe(JSON.parse(read('package.json')).version);
    const validate = spawnCommand(
      [...skillreg, 'validate', path.join(workdir.path, 'skills-seed')],
      baseEnv({}),
      workdir.path,
    );
    expect((await exitOf(validate)).code, validate.output()).toBe(0);
    expect(validate.output()).toMatch(/3 valid, 0 invalid/);
  }, 60_000);

  it.skipIf(!canRunAsPid1)(
    'ENTRYPOINT + CMD as PID 1 of its own PID namespace: SIGTERM from outside drains and exits 0',
    async () => {
      expect(build.code, build.output).toBe(0);
      const port = await freePort();
      const env = imageEnv(port);
      // The image's /sbin/tini is Debian's /usr/bin/tini here; everything else runs as written.
      const entrypoint = dockerfile.entrypoint.map((word) => (word === '/sbin/tini' ? TINI! : word));
      const unshare = spawnCommand(
        ['unshare', '--pid', '--fork', '--mount-proc', ...entrypoint, ...dockerfile.cmd],
        env,
        workdir.path,
      );
      try {
        await waitForLive(`http://127.0.0.1:${port}`, unshare);
        // What `docker stop` signals: the container's PID 1 (tini), seen from outside its namespace.
        const pid1 = Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim());
        expect(readFileSync(`/proc/${pid1}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+1$/m);
        const started = Date.now();
        process.kill(pid1, 'SIGTERM');
        const { code } = await exitOf(unshare);
        expect(code, unshare.output()).toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(unshare.output()).toContain('shutting down');
        expect(await connectionRefused(port)).toBe(true);
      } finally {
        if (unshare.exitCode === null) unshare.kill('SIGKILL');
      }
    },
    120_000,
  );

  it('CMD serves /livez, the HEALTHCHECK passes, SIGTERM exits 0 within 10 s, then the HEALTHCHECK fails', async () => {
    expect(build.code, build.output).toBe(0);
    const port = await freePort();
    const env = imageEnv(port);
    const server = spawnCommand(dockerfile.cmd, env, workdir.path);
    try {
      await waitForLive(`http://127.0.0.1:${port}`, server);
      // Ready once the search index and the agent catalogue are read (503 until then).
      const ready = await vi.waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          expect(res.status).toBe(200);
          return res.json();
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(ready).toEqual({ status: 'ok', database: testDatabase.url ? 'postgres' : 'pglite' });
      // The migrations and the seed skills were found where the image puts them.
      const catalogue = await (await fetch(`http://127.0.0.1:${port}/skills`)).json();
      expect(catalogue.items.length).toBeGreaterThan(0);
      // The console bundles from the sources the image carries.
      const script = await fetch(`http://127.0.0.1:${port}/ui/assets/app.js`);
      expect(script.status).toBe(200);
      expect((await script.text()).length).toBeGreaterThan(10_000);
      // Not a terminal and NODE_ENV=production: one JSON object per line.
      const firstLine = server.output().split('\n')[0]!;
      expect(() => JSON.parse(firstLine), firstLine).not.toThrow();

      expect(await runToExit(dockerfile.healthcheck, { ...env }, 15_000, workdir.path)).toBe(0);

      const started = Date.now();
      server.kill('SIGTERM');
      const { code } = await exitOf(server);
      expect(code, server.output()).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(server.output()).toContain('shutting down');

      expect(await runToExit(dockerfile.healthcheck, { ...env }, 15_000, workdir.path)).toBe(1);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  }, 120_000);
});
