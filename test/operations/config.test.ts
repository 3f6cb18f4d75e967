import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { type ConfigError, loadConfig } from '../../src/config.js';
import { configProblems } from '../helpers/context.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Runs the compiled server (`dist/server.js`, as `npm start` and the image do; test/helpers/global-setup.ts
 * compiled it for the run) with exactly the given environment (plus PATH).
 */
function startServerProcess(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collect(child: ChildProcess) {
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk) => {
    output.stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output.stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return { output, exited };
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir).toBe(path.resolve('./.data'));
    expect(path.isAbsolute(config.dataDir)).toBe(true);
    expect(config.seedDir).toBe(path.resolve('./skills-seed'));
    expect(config.adminToken).toBeUndefined();
    expect(config.publicUrl).toBeUndefined();
    expect(config.readAuth).toBe(false);
    expect(config.logLevel).toBe('info');
    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.limits).toEqual({
      maxUncompressedBytes: 30 * 1024 * 1024,
      maxFiles: 2000,
      maxSkillMdBytes: 1024 * 1024,
      maxFrontmatterBytes: 64 * 1024,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://user:pw@db:5432/skills',
      SKILLREG_DATA_DIR: '/var/lib/skillreg',
      SKILLREG_ADMIN_TOKEN: 'a-long-enough-admin-token',
      SKILLREG_SEED_DIR: '/opt/seeds',
      SKILLREG_PUBLIC_URL: 'https://skills.example.com/',
      SKILLREG_READ_AUTH: 'true',
      SKILLREG_MAX_FILES: '10',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgresql://user:pw@db:5432/skills',
      dataDir: '/var/lib/skillreg',
      adminToken: 'a-long-enough-admin-token',
      seedDir: '/opt/seeds',
      publicUrl: 'https://skills.example.com',
      readAuth: true,
      logLevel: 'debug',
    });
    expect(config.limits.maxFiles).toBe(10);
  });

  it('treats empty strings as unset, and SKILLREG_SEED_DIR="" disables seeding', () => {
    const config = loadConfig({
      SKILLREG_SEED_DIR: '',
      DATABASE_URL: '',
      SKILLREG_ADMIN_TOKEN: '',
      SKILLREG_READ_AUTH: '',
    });
    expect(config.seedDir).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
    expect(config.adminToken).toBeUndefined();
    expect(config.readAuth).toBe(false);
  });

  it('treats other empty variables (PORT= in a compose file) as unset, never as 0 or ""', () => {
    const config = loadConfig({
      PORT: '',
      HOST: '',
      SKILLREG_DATA_DIR: '',
      LOG_LEVEL: '',
      SKILLREG_PUBLIC_URL: '',
      SKILLREG_MAX_FILES: '',
      SKILLREG_MAX_BUNDLE_BYTES: '',
      SKILLREG_MAX_SKILL_MD_BYTES: '',
    });
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: path.resolve('./.data'),
      logLevel: 'info',
      publicUrl: undefined,
      limits: DEFAULT_LIMITS,
    });
  });

  it('accepts only http(s) public URLs', () => {
    for (const value of ['notaurl', 'localhost:3000', 'skills.example.com', 'ftp://skills.example.com']) {
      expect(configProblems({ SKILLREG_PUBLIC_URL: value })[0], value).toMatch(/^SKILLREG_PUBLIC_URL/);
    }
    expect(loadConfig({ SKILLREG_PUBLIC_URL: 'http://10.0.0.5:8080/registry/' }).publicUrl).toBe(
      'http://10.0.0.5:8080/registry',
    );
  });

  it('lists every problem at once', () => {
    const problems = configProblems({
      PORT: 'abc',
      DATABASE_URL: 'mysql://x',
      SKILLREG_PUBLIC_URL: 'notaurl',
      LOG_LEVEL: 'loud',
      SKILLREG_READ_AUTH: 'maybe',
      SKILLREG_MAX_FILES: '-1',
    });
    expect(problems).toHaveLength(6);
    for (const variable of [
      'PORT',
      'DATABASE_URL',
      'SKILLREG_PUBLIC_URL',
      'LOG_LEVEL',
      'SKILLREG_READ_AUTH',
      'SKILLREG_MAX_FILES',
    ]) {
      expect(
        problems.some((problem) => problem.startsWith(variable)),
        variable,
      ).toBe(true);
    }
    expect(problems.find((problem) => problem.startsWith('PORT'))).toContain('"abc"');
    expect(problems.find((problem) => problem.startsWith('SKILLREG_PUBLIC_URL'))).toContain(
      'absolute http(s) URL',
    );
  });

  it('rejects out-of-range ports', () => {
    expect(configProblems({ PORT: '70000' })[0]).toMatch(/^PORT/);
    expect(configProblems({ PORT: '3.5' })[0]).toMatch(/^PORT/);
  });

  it('never prints a secret in its problems', () => {
    const secretUrl = 'mysql://root:hunter2-db-password@db/skills';
    const shortToken = 'tooshort-secret';
    let message = '';
    try {
      loadConfig({ DATABASE_URL: secretUrl, SKILLREG_ADMIN_TOKEN: shortToken, PORT: 'abc' });
    } catch (error) {
      message = (error as Error).message;
      expect((error as ConfigError).problems).toHaveLength(3);
    }
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('SKILLREG_ADMIN_TOKEN');
    expect(message).toContain('at least 16 characters');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain(shortToken);
  });
});

describe('starting the server process', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('exits non-zero on invalid configuration, printing every problem and no secret', async () => {
    const child = startServerProcess({
      PORT: 'abc',
      DATABASE_URL: 'mysql://root:hunter2-db-password@x/db',
      SKILLREG_PUBLIC_URL: 'notaurl',
      SKILLREG_ADMIN_TOKEN: 'short-secret-x',
    });
    const { output, exited } = collect(child);
    const { code } = await exited;
    expect(code, output.stderr).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output.stderr).toContain('Invalid configuration');
    for (const variable of ['PORT', 'DATABASE_URL', 'SKILLREG_PUBLIC_URL', 'SKILLREG_ADMIN_TOKEN']) {
      expect(output.stderr, variable).toMatch(new RegExp(`^\\s*- ${variable}`, 'm'));
    }
    const all = output.stdout + output.stderr;
    expect(all).not.toContain('hunter2');
    expect(all).not.toContain('short-secret-x');
    // Fails fast: no stack trace, just the problems.
    expect(output.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('exits non-zero when the database cannot be reached, without printing its password', async () => {
    const child = startServerProcess({
      DATABASE_URL: 'postgres://registry:s3cret-db-pw@127.0.0.1:1/skills',
      SKILLREG_SEED_DIR: '',
    });
    const { output, exited } = collect(child);
    const { code } = await exited;
    expect(code).toBe(1);
    expect(output.stderr).toMatch(/failed to start/);
    expect(output.stdout + output.stderr).not.toContain('s3cret-db-pw');
  }, 60_000);

  it('runs from a checkout whose path has a space (server and migrate entry points)', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'skillreg space '));
    dirs.push(parent);
    const checkout = path.join(parent, 'my checkout');
    await mkdir(checkout);
    for (const entry of ['src', 'migrations', 'package.json', 'tsconfig.json']) {
      await cp(path.join(ROOT, entry), path.join(checkout, entry), { recursive: true });
    }
    await symlink(path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
    for (const script of ['src/server.ts', 'src/scripts/migrate.ts']) {
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: checkout,
        env: { PATH: process.env.PATH ?? '', PORT: 'abc' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const { output, exited } = collect(child);
      const { code } = await exited;
      // Before the fix the entry-point check failed on the encoded space: exit 0 having done nothing.
      expect(code, `${script}: ${output.stderr}`).toBe(1);
      expect(output.stderr, script).toMatch(/^\s*- PORT="abc"/m);
    }
  }, 60_000);

  it('starts with a valid configuration, serves requests and stops cleanly on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'skillreg-config-'));
    dirs.push(dataDir);
    const child = startServerProcess({ PORT: '0', SKILLREG_DATA_DIR: dataDir, SKILLREG_SEED_DIR: '' });
    const { output, exited } = collect(child);
    try {
      const address = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`server did not start:\n${output.stdout}\n${output.stderr}`)),
          90_000,
        );
        const check = () => {
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        child.stdout?.on('data', check);
        child.on('exit', () => reject(new Error(`server exited:\n${output.stdout}\n${output.stderr}`)));
      });
      const ready = await fetch(`${address}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', database: 'pglite' });
      // Writes are refused without SKILLREG_ADMIN_TOKEN or any token.
      const write = await fetch(`${address}/skills`, {
        method: 'POST',
        body: 'x',
        headers: { 'content-type': 'text/markdown' },
      });
      expect(write.status).toBe(401);
      // Logs are JSON lines when not on a terminal.
      const lines = output.stdout.trim().split('\n');
      expect(() => lines.map((line) => JSON.parse(line))).not.toThrow();
    } finally {
      child.kill('SIGTERM');
    }
    const { code } = await exited;
    expect(code, output.stderr).toBe(0);
  }, 120_000);
});
