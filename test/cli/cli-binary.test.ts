import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { uniqueName } from '../helpers/bundles.js';
import {
  type CliRun,
  capturedOutput,
  cliInProcess,
  outputOf,
  PACKAGE_VERSION,
  runSkillreg,
  SKILLREG_BIN,
  showRun,
  summaryRow,
} from '../helpers/cli-output.js';
import { ADMIN_TOKEN } from '../helpers/context.js';
import { startFlakyProxy } from '../helpers/flaky-proxy.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';

/**
 * The real `skillreg` binary (node bin/skillreg.js) against the live service: its help, --version, what
 * goes to stdout and what to stderr (waits before retries included), and a reader that closes the pipe
 * early.
 */

let ctx: LiveApp;
/** A namespace of this file's own holding `alpha` at 1.0.0 and 1.0.1. */
const team = uniqueName('team');
const alpha = uniqueName('alpha');

async function write(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

function skill(name: string, description: string): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nUse it well.\n`;
}

async function versionsOf(name: string): Promise<string[]> {
  const res = await ctx.app.inject(`/skills/${name}/versions`);
  if (res.statusCode === 404) return [];
  return (res.json() as { version: string }[]).map((item) => item.version);
}

/** The real binary in CI mode with the admin token, no other SKILLREG_ setting inherited. */
function cli(
  args: string[],
  env: Record<string, string> = {},
  options: { closeStdout?: boolean } = {},
): Promise<CliRun> {
  return runSkillreg(args, { cwd: ctx.work, url: ctx.url, token: ADMIN_TOKEN, env, ...options });
}

beforeAll(async () => {
  ctx = await liveApp('skillreg-cli-binary-');
  for (const description of ['First.', 'Second.']) {
    await write(path.join(ctx.work, 'team', alpha, 'SKILL.md'), skill(alpha, description));
    const published = await cliInProcess([
      'publish',
      path.join(ctx.work, 'team', alpha),
      '--namespace',
      team,
      '--url',
      ctx.url,
      '--token',
      ADMIN_TOKEN,
    ]);
    expect(published.code, published.stderr).toBe(0);
  }
}, 120_000);

afterAll(() => ctx?.close());

describe('skillreg, the binary', () => {
  it('prints --help for every command and exits 0', async () => {
    const commands = [
      [],
      ['serve'],
      ['migrate'],
      ['validate'],
      ['publish'],
      ['sync'],
      ['pull'],
      ['token'],
      ['token', 'create'],
      ['token', 'list'],
      ['token', 'revoke'],
      ['list'],
      ['search'],
      ['info'],
      ['tag'],
      ['yank'],
      ['view'],
      ['view', 'list'],
      ['view', 'get'],
      ['view', 'put'],
      ['view', 'delete'],
    ];
    // The binary for two of them; the rest in-process through runCli, the very code the binary runs.
    const [binaryRoot, binarySync] = await Promise.all([cli(['--help']), cli(['sync', '--help'])]);
    const runs: CliRun[] = [];
    for (const command of commands) {
      const { output, captured } = capturedOutput();
      const code = await runCli([...command, '--help'], output);
      runs.push({ code, ...captured });
    }
    expect(binaryRoot!.code, showRun(binaryRoot!)).toBe(0);
    expect(binaryRoot!.stdout).toBe(runs[0]!.stdout);
    expect(binarySync!.code, showRun(binarySync!)).toBe(0);
    expect(binarySync!.stdout).toBe(runs[5]!.stdout);
    runs.forEach((run, index) => {
      const command = commands[index]!;
      expect(run.code, `${command.join(' ')} --help\n${showRun(run)}`).toBe(0);
      expect(run.stdout).toContain(`Usage: skillreg ${command.join(' ')}`.trimEnd());
      expect(run.stdout).toContain('Examples:');
      expect(run.stderr).toBe('');
    });
    const [root, , , validate, publish, sync, pull, , create] = runs;
    for (const command of [
      'serve',
      'migrate',
      'validate',
      'publish',
      'sync',
      'pull',
      'list [options]',
      'search [options] <words...>',
      'info [options] <name>',
      'tag [options] <name> <tag> <version>',
      'yank [options] <name> <version>',
      'view',
      'token',
    ]) {
      expect(root!.stdout).toContain(command);
    }
    expect(root!.stdout).toContain('-V, --version');
    expect(root!.stdout).toContain('SKILLREG_NAMESPACE');
    expect(root!.stdout).toContain('SKILLREG_URL');
    expect(root!.stdout).toContain('SKILLREG_TOKEN');
    expect(validate!.stdout).toContain('offline');
    expect(publish!.stdout).toMatch(/--version <version>[\s\S]*--tag <tag>/);
    expect(sync!.stdout).toContain('--dry-run');
    expect(sync!.stdout).toContain('node_modules');
    expect(sync!.stdout).toContain('--token <token>'); // global options are shown on every command
    expect(pull!.stdout).toContain('--force');
    expect(create!.stdout).toMatch(/--scope <scope\.\.\.>[\s\S]*read[\s\S]*publish[\s\S]*admin/);
  }, 120_000);

  it('--version and -V print the version; a command keeps its own --version <version>', async () => {
    const [long, short, withUrl, info] = await Promise.all([
      cli(['--version']),
      cli(['-V']),
      cli(['--url', ctx.url, '--version']),
      cli(['info', alpha, '--version', '1.0.0', '--namespace', team]),
    ]);
    for (const run of [long, short, withUrl]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${PACKAGE_VERSION}\n`);
      expect(run.stderr).toBe('');
    }
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(new RegExp(`^${alpha}@1\\.0\\.0 `, 'm'));
  }, 120_000);

  it('results go to stdout, failures and warnings to stderr', async () => {
    const folder = path.join(ctx.work, 'split', 'split-folder');
    await mkdir(folder, { recursive: true });
    await writeFile(
      path.join(folder, 'SKILL.md'),
      `---\nname: ${uniqueName('split')}\ndescription: Has: a colon.\n---\n# Split\n\nBody.\n`,
    );
    const [published, failed, listed] = await Promise.all([
      cli(['publish', folder, '--namespace', uniqueName('split')]),
      cli(['list', '--namespace', 'never-published-here']),
      cli(['list', '--namespace', team]),
    ]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(/^created {4}split-\S+@1\.0\.0 {2}sha256:[0-9a-f]{64}\n$/);
    const warnings = published.stderr.trimEnd().split('\n');
    expect(warnings).toEqual([
      expect.stringMatching(/^ {2}warn {3}SKILL\.md#description: .*contains ': '/),
      expect.stringMatching(/^ {2}warn {3}SKILL\.md#name: the folder is named 'split-folder'/),
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^404 .*never-published-here/m);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+VERSION/);
    expect(listed.stderr).toBe('');
  }, 120_000);

  it('ends quietly, exit 0, when the reader of its stdout has gone', async () => {
    // The reading end is closed before the command writes anything: every write fails with EPIPE.
    const closed = await cli(['list', '--namespace', team], {}, { closeStdout: true });
    expect(closed.stderr).toBe('');
    expect(closed.code).toBe(0);

    // `| head -1` on more output than a pipe holds: the command is still writing when head exits.
    const big = path.join(ctx.work, 'big', uniqueName('big'));
    for (let at = 0; at < 800; at += 1) {
      await mkdir(path.join(big, 'references'), { recursive: true });
      await writeFile(
        path.join(big, 'references', `note-${String(at).padStart(4, '0')}.md`),
        `# Note ${at}\n`,
      );
    }
    await writeFile(
      path.join(big, 'SKILL.md'),
      `---\nname: ${path.basename(big)}\ndescription: Big.\n---\n# Big\n`,
    );
    const namespace = uniqueName('big');
    const published = await cli(['publish', big, '--namespace', namespace]);
    expect(published.code, published.stderr).toBe(0);
    const piped = await outputOf(
      spawn(
        'bash',
        [
          '-c',
          'set -o pipefail; "$0" "$1" info "$2" --namespace "$3" --json | head -1',
          process.execPath,
          SKILLREG_BIN,
          path.basename(big),
          namespace,
        ],
        { env: { ...process.env, CI: 'true', SKILLREG_URL: ctx.url }, cwd: ctx.work },
      ),
    );
    expect(piped.stdout).toBe('{\n');
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
  }, 120_000);

  it('waits out 429 and 503 as Retry-After asks, saying so, and publishes; SKILLREG_RETRIES=0 fails at once', async () => {
    const proxy = await startFlakyProxy(ctx.url);
    try {
      const tree = path.join(ctx.work, 'retry-tree');
      await write(
        path.join(tree, 'skills/cli-retry/SKILL.md'),
        skill('cli-retry', 'Retry: published after a 429.'),
      );
      proxy.script([{ status: 429, headers: { 'retry-after': '1' } }], (method) => method === 'POST');
      const sync = await cli(['sync', tree], { SKILLREG_URL: proxy.url });
      expect(sync.code, showRun(sync)).toBe(0);
      // The wait shows in the progress (CI: a plain line, on stderr) rather than looking like a hang.
      expect(sync.stdout).not.toContain('waiting');
      expect(sync.stderr).toMatch(
        /^\s+waiting: rate limited \(429\); retrying POST \/skills in 1\.\d s as Retry-After asks \(attempt 2 of 4\)$/m,
      );
      expect(summaryRow(sync.stdout, 'skills/cli-retry')?.slice(0, 3)).toEqual([
        'published',
        'cli-retry',
        '1.0.0',
      ]);
      expect(sync.stdout).toContain('1 published, 0 unchanged, 0 refused');
      expect(
        proxy.seen.filter((request) => request.method === 'POST').map((request) => request.outcome),
      ).toEqual([429, 'proxied']);

      // publish: the waiting line goes to stderr, the result to stdout as usual.
      await write(
        path.join(tree, 'skills/cli-retry/SKILL.md'),
        skill('cli-retry', 'Retry: published after a 503.'),
      );
      proxy.script([{ status: 503, headers: { 'retry-after': '0' } }], (method) => method === 'POST');
      const published = await cli(['publish', path.join(tree, 'skills/cli-retry')], {
        SKILLREG_URL: proxy.url,
      });
      expect(published.code, showRun(published)).toBe(0);
      expect(published.stdout).toMatch(/^created\s+cli-retry@1\.0\.1\s/m);
      expect(published.stderr).toMatch(
        /^skillreg: registry unavailable \(503\); retrying POST \/skills in 0\.\d s/m,
      );

      // Retrying off: the first refusal is the answer; a 429 left after the retries stops a sync.
      proxy.script([{ status: 503, headers: { 'retry-after': '0' } }], (method) => method === 'GET');
      const impatient = await cli(['pull', 'cli-retry', path.join(ctx.work, 'pulled/retry')], {
        SKILLREG_URL: proxy.url,
        SKILLREG_RETRIES: '0',
      });
      expect(impatient.code, showRun(impatient)).toBe(1);
      expect(impatient.stderr).toMatch(/^503 /m);
      expect(impatient.stderr).not.toContain('retrying');
      await write(
        path.join(tree, 'skills/cli-retry/SKILL.md'),
        skill('cli-retry', 'Retry: refused until the retries run out.'),
      );
      proxy.script(
        Array.from({ length: 2 }, () => ({ status: 429, headers: { 'retry-after': '0' } })),
        (method) => method === 'POST',
      );
      const stopped = await cli(['sync', tree, '--retries', '1'], { SKILLREG_URL: proxy.url });
      expect(stopped.code, showRun(stopped)).toBe(1);
      expect(stopped.stderr).toContain('(attempt 2 of 2)');
      expect(stopped.stderr).toMatch(/sync stopped: 429 /);
      expect(await versionsOf('cli-retry')).toEqual(['1.0.1', '1.0.0']);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
