import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  binaryEnv,
  type CliRun,
  runSkillreg,
  SKILLREG_BIN,
  showRun,
  summaryRow,
} from '../helpers/cli-output.js';
import { ADMIN_TOKEN } from '../helpers/context.js';
import { withDatabase } from '../helpers/global-setup.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';

/**
 * End-to-end: the real `skillreg` binary (node bin/skillreg.js, as `npx skillreg` runs it) against the
 * real service listening on a port, with real skill trees on disk.
 */

let ctx: LiveApp;
let repo: string;
let outside: string;

/** The environment of every run: no inherited registry or database settings, CI mode on. */
function baseEnv(): Record<string, string> {
  return binaryEnv(ctx.url, ADMIN_TOKEN);
}

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return runSkillreg(args, { cwd: ctx.work, url: ctx.url, token: ADMIN_TOKEN, env });
}

async function write(file: string, content: string | Uint8Array, mode?: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  if (mode !== undefined) await chmod(file, mode);
}

function skill(name: string, description: string, extra = '', body = `# ${name}\n\nUse it well.\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}`;
}

/** Every byte 0-255 and then some noise: a real binary asset. */
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(4096)]);

/**
 * repo/
 *   .claude/skills/cli-alpha/           valid
 *   .claude/skills/beta-link -> ../../skills/cli-beta   (the same skill through a link: reported once)
 *   .agents/skills/cli-gamma/           valid, with a warning (an unknown frontmatter key)
 *   skills/cli-beta/                    valid: references/, executable scripts/run.sh, binary asset,
 *                                       a nested folder and a link to a file inside the skill
 *   skills/bad/                         refused: name 'Bad Name'
 *   skills/leaky/                       refused: a link to a file outside the skill
 *   tools/deeply/nested/cli-delta/      valid, deep in the tree
 *   node_modules/pkg/skills/in-node-modules/, .git/skills/in-git/   ignored
 */
async function buildTree(): Promise<void> {
  await write(path.join(repo, 'README.md'), '# a repository with skills\n');
  await write(
    path.join(repo, '.claude/skills/cli-alpha/SKILL.md'),
    skill('cli-alpha', 'Alpha: the first skill.'),
  );
  const beta = path.join(repo, 'skills/cli-beta');
  await write(path.join(beta, 'SKILL.md'), skill('cli-beta', 'Beta: a skill with files.'));
  await write(path.join(beta, 'references/guide.md'), '# Guide\n\nRead me first.\n');
  await write(path.join(beta, 'references/deep/nested/notes.txt'), 'deep notes\r\nwith CRLF\r\n');
  await write(path.join(beta, 'scripts/run.sh'), '#!/bin/sh\necho "running"\n', 0o755);
  await write(path.join(beta, 'assets/logo.bin'), BINARY);
  await symlink('references/guide.md', path.join(beta, 'guide-link.md'));
  await mkdir(path.join(repo, '.claude/skills'), { recursive: true });
  await symlink('../../skills/cli-beta', path.join(repo, '.claude/skills/beta-link'));
  await write(
    path.join(repo, '.agents/skills/cli-gamma/SKILL.md'),
    skill('cli-gamma', 'Gamma: found under .agents.', 'unknown-key: kept\n'),
  );
  await write(path.join(repo, 'tools/deeply/nested/cli-delta/SKILL.md'), skill('cli-delta', 'Delta: deep.'));
  await write(path.join(repo, 'skills/bad/SKILL.md'), skill('Bad Name', 'An invalid name.'));
  await write(path.join(repo, 'skills/leaky/SKILL.md'), skill('leaky', 'Links outside itself.'));
  await write(path.join(outside, 'secret.txt'), 'not part of any skill\n');
  await symlink(path.join(outside, 'secret.txt'), path.join(repo, 'skills/leaky/secret.txt'));
  await write(
    path.join(repo, 'node_modules/pkg/skills/in-node-modules/SKILL.md'),
    skill('in-node-modules', 'Must be ignored.'),
  );
  await write(path.join(repo, '.git/skills/in-git/SKILL.md'), skill('in-git', 'Must be ignored.'));
}

interface Entry {
  bytes: Buffer;
  executable: boolean;
}

/** A folder as path -> bytes and executable bit, following links (what an agent reading it sees). */
async function snapshot(root: string): Promise<Map<string, Entry>> {
  const result = new Map<string, Entry>();
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const name of (await readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const stats = await stat(full);
      const relative = prefix ? `${prefix}/${name}` : name;
      if (stats.isDirectory()) await walk(full, relative);
      else result.set(relative, { bytes: await readFile(full), executable: (stats.mode & 0o100) !== 0 });
    }
  }
  await walk(root, '');
  return result;
}

function expectSameTree(actual: Map<string, Entry>, expected: Map<string, Entry>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [file, entry] of expected) {
    const got = actual.get(file)!;
    expect(got.bytes.equals(entry.bytes), `${file}: bytes differ`).toBe(true);
    expect(got.executable, `${file}: executable bit`).toBe(entry.executable);
  }
}

async function versionsOf(name: string): Promise<string[]> {
  const res = await ctx.app.inject(`/skills/${name}/versions`);
  if (res.statusCode === 404) return [];
  return (res.json() as { version: string }[]).map((item) => item.version);
}

beforeAll(async () => {
  ctx = await liveApp('skillreg-cli-');
  repo = path.join(ctx.work, 'repo');
  outside = path.join(ctx.work, 'outside');
  await buildTree();
});

afterAll(() => ctx?.close());

// Every test starts the binary several times: seconds each on a busy machine.
describe('skillreg CLI (subprocess, live service)', { timeout: 120_000 }, () => {
  const tokens: { publish?: string; read?: string } = {};

  it('token create, list and revoke with the admin token; secrets never listed', async () => {
    const publish = await cli(['token', 'create', '--name', 'cli-publish', '--scope', 'publish']);
    expect(publish.code, showRun(publish)).toBe(0);
    expect(publish.stdout).toMatch(/created token [0-9a-f-]{36} \(cli-publish; scopes publish\)/);
    const lines = publish.stdout.trim().split('\n');
    tokens.publish = lines.at(-1)!.trim();
    expect(tokens.publish.length).toBeGreaterThan(20);

    const [read, temporary] = await Promise.all([
      cli(['token', 'create', '--name', 'cli-read', '--scope', 'read', '--json']),
      cli([
        'token',
        'create',
        '--name',
        'cli-temporary',
        '--scope',
        'read',
        'publish',
        '--expires-in-days',
        '1',
        '--json',
      ]),
    ]);
    expect(read.code, showRun(read)).toBe(0);
    expect(temporary.code, showRun(temporary)).toBe(0);
    tokens.read = (JSON.parse(read.stdout) as { secret: string }).secret;
    const temp = JSON.parse(temporary.stdout) as {
      id: string;
      secret: string;
      scopes: string[];
      expiresAt: string;
    };
    expect(temp.scopes.sort()).toEqual(['publish', 'read']);
    expect(temp.expiresAt).toBeTruthy();

    const revoke = await cli(['token', 'revoke', temp.id]);
    expect(revoke.code, showRun(revoke)).toBe(0);
    expect(revoke.stdout).toContain(`revoked token ${temp.id}`);

    const [list, revoked, badDays] = await Promise.all([
      cli(['token', 'list']),
      cli(['publish', path.join(repo, '.claude/skills/cli-alpha')], { SKILLREG_TOKEN: temp.secret }),
      cli(['token', 'create', '--name', 'x', '--scope', 'read', '--expires-in-days', 'soon']),
    ]);
    expect(list.code, showRun(list)).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+SCOPES/m);
    expect(list.stdout).toContain('cli-publish');
    expect(list.stdout).toContain('cli-read');
    expect(list.stdout).not.toContain('cli-temporary');
    for (const secret of [tokens.publish, tokens.read, temp.secret])
      expect(list.stdout).not.toContain(secret);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain('401');
    expect(revoked.stderr).toContain('revoked');
    expect(badDays.code).toBe(1);
    expect(badDays.stderr).toContain('--expires-in-days');
  });

  it('validate: a whole tree lists every error with its fix and exits 1; a good folder exits 0', async () => {
    const [tree, good] = await Promise.all([
      cli(['validate', repo]),
      cli(['validate', 'repo/skills/cli-beta']),
    ]);
    expect(tree.code, showRun(tree)).toBe(1);
    expect(tree.stdout).toMatch(
      /ok\s+\S*\.claude\/skills\/cli-alpha\s+\(cli-alpha, 1 file, sha256:[0-9a-f]{64}\)/,
    );
    expect(tree.stdout).toMatch(/ok\s+\S*\.agents\/skills\/cli-gamma/);
    expect(tree.stdout).toMatch(/ok\s+\S*tools\/deeply\/nested\/cli-delta/);
    expect(tree.stdout).toMatch(/ok\s+\S*(skills\/cli-beta|beta-link)\s+\(cli-beta, 6 files/);
    // Warnings on stderr, each naming its folder; results on stdout.
    expect(tree.stderr).toMatch(/^ {2}warn {3}\S*\.agents\/skills\/cli-gamma: SKILL\.md: .*'unknown-key'/m);
    expect(tree.stdout).not.toContain('warn');
    expect(tree.stderr).toMatch(/FAIL\s+\S*skills\/bad/);
    expect(tree.stderr).toMatch(/error\s+SKILL\.md#name: name 'Bad Name' .*try 'bad-name'/);
    expect(tree.stderr).toMatch(/FAIL\s+\S*skills\/leaky/);
    expect(tree.stderr).toMatch(
      /error\s+secret\.txt: symbolic link 'secret\.txt' points outside the skill folder.*copy the file into the folder or remove the link/,
    );
    expect(tree.stdout).toContain('4 valid, 2 invalid');
    expect(`${tree.stdout}${tree.stderr}`).not.toMatch(/in-node-modules|in-git/);

    expect(good.code, showRun(good)).toBe(0);
    expect(good.stdout).toMatch(/^ok\s+repo\/skills\/cli-beta\s+\(cli-beta, 6 files, sha256:/m);
    expect(good.stdout).toContain('1 valid, 0 invalid');
    expect(good.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^ {2}warn {3}SKILL\.md#description: /),
    ]);
  });

  it('publish: prints name, version, digest and created, then unchanged for the same content', async () => {
    const beta = path.join(repo, 'skills/cli-beta');
    const first = await cli(['publish', beta], { SKILLREG_TOKEN: tokens.publish });
    expect(first.code, showRun(first)).toBe(0);
    expect(first.stdout).toMatch(/^created\s+cli-beta@1\.0\.0\s+sha256:[0-9a-f]{64}$/m);
    const digest = /sha256:[0-9a-f]{64}/.exec(first.stdout)![0];
    const detail = (await ctx.app.inject('/skills/cli-beta')).json() as {
      digest: string;
      files: { path: string }[];
    };
    expect(detail.digest).toBe(digest);
    expect(detail.files.map((file) => file.path).sort()).toEqual([
      'SKILL.md',
      'assets/logo.bin',
      'guide-link.md',
      'references/deep/nested/notes.txt',
      'references/guide.md',
      'scripts/run.sh',
    ]);

    // The token from --token wins over SKILLREG_TOKEN; SKILL.md's own path names its folder.
    const again = await cli(['publish', path.join(beta, 'SKILL.md'), '--token', tokens.publish!], {
      SKILLREG_TOKEN: 'wrong',
    });
    expect(again.code, showRun(again)).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^unchanged\\s+cli-beta@1\\.0\\.0\\s+${digest}$`, 'm'));
    expect(await versionsOf('cli-beta')).toEqual(['1.0.0']);
  });

  it('refuses a wrong token with the reason (401 not known) and a read-only token (403 scope publish)', async () => {
    const alpha = path.join(repo, '.claude/skills/cli-alpha');
    const [unknown, readOnly, syncUnknown] = await Promise.all([
      cli(['publish', alpha], { SKILLREG_TOKEN: 'skr_not-a-token-this-registry-issued' }),
      cli(['publish', alpha], { SKILLREG_TOKEN: tokens.read }),
      cli(['sync', repo], { SKILLREG_TOKEN: 'skr_not-a-token-this-registry-issued' }),
    ]);
    expect(unknown.code, showRun(unknown)).toBe(1);
    expect(unknown.stderr).toMatch(/401 .*not known/);
    expect(readOnly.code, showRun(readOnly)).toBe(1);
    expect(readOnly.stderr).toMatch(/403 .*scope 'publish'/);
    expect(syncUnknown.code, showRun(syncUnknown)).toBe(1);
    expect(syncUnknown.stderr).toMatch(/sync stopped: 401 .*not known/);
    expect(await versionsOf('cli-alpha')).toEqual([]);
  });

  it('sync publishes every valid skill, lists the refused ones with their reasons and exits 1', async () => {
    const run = await cli(['sync', repo], { SKILLREG_TOKEN: tokens.publish });
    expect(run.code, showRun(run)).toBe(1);
    // CI: plain progress lines, no bar.
    expect(run.stdout).toMatch(/^\[1\/6\] /m);
    expect(run.stdout).toMatch(/^\[6\/6\] /m);
    expect(run.stdout).not.toContain('\u001b[');
    expect(run.stdout).toMatch(/^STATUS\s+NAME\s+VERSION\s+FOLDER\s+REASON$/m);
    expect(summaryRow(run.stdout, '.claude/skills/cli-alpha')?.slice(0, 3)).toEqual([
      'published',
      'cli-alpha',
      '1.0.0',
    ]);
    expect(summaryRow(run.stdout, '.agents/skills/cli-gamma')?.slice(0, 3)).toEqual([
      'published',
      'cli-gamma',
      '1.0.0',
    ]);
    expect(summaryRow(run.stdout, 'tools/deeply/nested/cli-delta')?.slice(0, 3)).toEqual([
      'published',
      'cli-delta',
      '1.0.0',
    ]);
    // cli-beta is reached first through .claude/skills/beta-link and only once.
    expect(summaryRow(run.stdout, '.claude/skills/beta-link')?.slice(0, 3)).toEqual([
      'unchanged',
      'cli-beta',
      '1.0.0',
    ]);
    expect(summaryRow(run.stdout, 'skills/cli-beta')).toBeUndefined();
    const bad = summaryRow(run.stdout, 'skills/bad');
    expect(bad?.[0]).toBe('refused');
    expect(bad?.[4]).toMatch(/name 'Bad Name' .*try 'bad-name'/);
    const leaky = summaryRow(run.stdout, 'skills/leaky');
    expect(leaky?.slice(0, 2)).toEqual(['refused', '-']);
    expect(leaky?.[4]).toMatch(/symbolic link 'secret\.txt' points outside the skill folder/);
    expect(run.stdout).toContain('3 published, 1 unchanged, 2 refused');
    expect(run.stdout).toMatch(/^3 published, 1 unchanged, 2 refused; \d+ warnings \(on stderr\)$/m);
    expect(run.stderr).toMatch(/^ {2}warn {3}\.agents\/skills\/cli-gamma: SKILL\.md: .*'unknown-key'/m);
    expect(run.stdout).not.toContain('unknown-key');

    const catalogue = (await ctx.app.inject('/skills')).json() as { items: { name: string }[] };
    expect(catalogue.items.map((item) => item.name).sort()).toEqual([
      'cli-alpha',
      'cli-beta',
      'cli-delta',
      'cli-gamma',
    ]);
  });

  it('a second sync changes nothing: everything unchanged, no new versions', async () => {
    const run = await cli(['sync', repo], { SKILLREG_TOKEN: tokens.publish });
    expect(run.code, showRun(run)).toBe(1);
    expect(run.stdout).toContain('0 published, 4 unchanged, 2 refused');
    for (const name of ['cli-alpha', 'cli-beta', 'cli-gamma', 'cli-delta']) {
      expect(await versionsOf(name), name).toEqual(['1.0.0']);
    }
  });

  let original: Map<string, Entry>;

  it('sync --dry-run on a changed tree says what would be published and publishes nothing', async () => {
    const beta = path.join(repo, 'skills/cli-beta');
    original = await snapshot(beta);
    await write(path.join(beta, 'references/guide.md'), '# Guide\n\nRead me first. Changed.\n');
    await write(
      path.join(repo, 'skills/cli-epsilon/SKILL.md'),
      skill('cli-epsilon', 'Epsilon: new.', 'metadata:\n  version: "3.1.0"\n'),
    );
    const run = await cli(['sync', repo, '--dry-run'], { SKILLREG_TOKEN: tokens.read });
    expect(run.code, showRun(run)).toBe(1);
    expect(summaryRow(run.stdout, '.claude/skills/beta-link')?.slice(0, 3)).toEqual([
      'would publish',
      'cli-beta',
      '1.0.1',
    ]);
    expect(summaryRow(run.stdout, 'skills/cli-epsilon')?.slice(0, 3)).toEqual([
      'would publish',
      'cli-epsilon',
      '3.1.0',
    ]);
    expect(summaryRow(run.stdout, '.claude/skills/cli-alpha')?.slice(0, 3)).toEqual([
      'unchanged',
      'cli-alpha',
      '1.0.0',
    ]);
    expect(run.stdout).toContain('dry run: 2 would publish, 3 unchanged, 2 refused; nothing was published');
    expect(await versionsOf('cli-beta')).toEqual(['1.0.0']);
    expect(await versionsOf('cli-epsilon')).toEqual([]);
  });

  it('sync exits 0 once every skill is valid, publishing only what changed', async () => {
    await rm(path.join(repo, 'skills/bad'), { recursive: true });
    await rm(path.join(repo, 'skills/leaky'), { recursive: true });
    const run = await cli(['sync', repo], { SKILLREG_TOKEN: tokens.publish });
    expect(run.code, showRun(run)).toBe(0);
    expect(run.stdout).toContain('2 published, 3 unchanged, 0 refused');
    expect(await versionsOf('cli-beta')).toEqual(['1.0.1', '1.0.0']);
    expect(await versionsOf('cli-epsilon')).toEqual(['3.1.0']);
    // stderr holds the registry's warnings and nothing else.
    expect(
      run.stderr
        .trimEnd()
        .split('\n')
        .filter((line) => !line.startsWith('  warn   ')),
    ).toEqual([]);
  });

  it('pull restores every byte and the executable bit, verifying the digest; refuses a non-empty target', async () => {
    const target = path.join(ctx.work, 'pulled/cli-beta');
    const pulled = await cli(['pull', 'cli-beta', target]);
    expect(pulled.code, showRun(pulled)).toBe(0);
    expect(pulled.stdout).toMatch(/pulled cli-beta@1\.0\.1 \(6 files, sha256:[0-9a-f]{64}\)/);
    expectSameTree(await snapshot(target), await snapshot(path.join(repo, 'skills/cli-beta')));
    expect((await snapshot(target)).get('scripts/run.sh')?.executable).toBe(true);
    expect((await snapshot(target)).get('assets/logo.bin')?.bytes.equals(BINARY)).toBe(true);

    const [refused, older] = await Promise.all([
      cli(['pull', 'cli-beta', target]),
      cli(['pull', 'cli-beta', path.join(ctx.work, 'pulled/old'), '--version', '1.0.0']),
    ]);
    expect(refused.code, showRun(refused)).toBe(1);
    expect(refused.stderr).toMatch(/exists and is not empty; pass --force/);
    expect(older.code, showRun(older)).toBe(0);
    expectSameTree(await snapshot(path.join(ctx.work, 'pulled/old')), original);

    const forced = await cli(['pull', 'cli-beta', target, '--version', '1.0.0', '--force']);
    expect(forced.code, showRun(forced)).toBe(0);
    expectSameTree(await snapshot(target), original);

    const missing = await cli(['pull', 'cli-no-such-skill', path.join(ctx.work, 'pulled/none')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 .*cli-no-such-skill/);
  });

  it('fails with the reason when the registry cannot be reached', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const run = await cli(['publish', path.join(repo, 'skills/cli-beta')], {
      SKILLREG_URL: `http://127.0.0.1:${port}`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach the registry at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it('migrate applies the migrations to a fresh database; serve then runs the service on it until SIGTERM', async () => {
    const serverUrl = inject('postgresUrl');
    let databaseEnv: Record<string, string>;
    let dropDatabase = async () => {};
    if (serverUrl) {
      const name = `skillreg_cli_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      databaseEnv = { DATABASE_URL: withDatabase(serverUrl, name) };
      dropDatabase = async () => {
        const client = new pg.Client({ connectionString: serverUrl });
        await client.connect();
        await client.query(`drop database if exists ${name} with (force)`);
        await client.end();
      };
    } else {
      databaseEnv = { SKILLREG_DATA_DIR: path.join(ctx.work, 'pglite-data') };
    }
    try {
      const migrate = await cli(['migrate'], databaseEnv);
      expect(migrate.code, showRun(migrate)).toBe(0);
      if (serverUrl) {
        expect(migrate.stdout).toContain('migrations applied (postgres)');
        const client = new pg.Client({ connectionString: databaseEnv.DATABASE_URL });
        await client.connect();
        const tables = await client.query(
          `select count(*)::int as n from information_schema.tables where table_schema = 'public'`,
        );
        await client.end();
        expect(tables.rows[0].n).toBeGreaterThan(3);
      } else {
        expect(migrate.stdout).toContain(`migrations applied (pglite:${databaseEnv.SKILLREG_DATA_DIR})`);
        expect((await readdir(databaseEnv.SKILLREG_DATA_DIR!)).length).toBeGreaterThan(0);
      }

      // `serve` is `npm start`: it keeps running, answers, and stops cleanly on SIGTERM.
      const child = spawn(process.execPath, [SKILLREG_BIN, 'serve'], {
        cwd: ctx.work,
        env: {
          ...baseEnv(),
          ...databaseEnv,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          SKILLREG_SEED_DIR: '',
          SKILLREG_ADMIN_TOKEN: ADMIN_TOKEN,
        },
      });
      let logs = '';
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const listening = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${logs}`)), 60_000);
        const onData = (chunk: Buffer) => {
          logs += chunk.toString();
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${logs}`)));
      });
      const live = await fetch(`${listening}/livez`);
      expect(live.status).toBe(200);
      const catalogue = await fetch(`${listening}/skills`);
      expect(((await catalogue.json()) as { items: unknown[] }).items).toEqual([]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await dropDatabase();
    }
  }, 120_000);
});
