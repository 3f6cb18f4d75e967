import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, Option } from 'commander';
import { readArchive } from '../bundle/archive-read.js';
import { writeTarGz } from '../bundle/archive-write.js';
import { bundleDigest } from '../bundle/digest.js';
import { normalizeEntryPath } from '../bundle/paths.js';
import { type PreparedBundle, prepareBundle } from '../bundle/prepare.js';
import { BundleError, type BundleIssue, DEFAULT_LIMITS } from '../bundle/types.js';
import { RegistryError, SkillRegistryClient } from '../client/index.js';
import { findSkillFolders, readSkillFolder } from '../services/skill-folder.js';
import { createProgress, type Output, printTable } from './output.js';

const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Thrown for a failure already explained to the user: exit non-zero without a stack trace. */
class ReportedFailure extends Error {}

interface GlobalOptions {
  url: string;
  token?: string;
}

function clientOf(command: Command): SkillRegistryClient {
  const options = command.optsWithGlobals<GlobalOptions>();
  return new SkillRegistryClient({
    url: options.url,
    token: options.token,
    headers: { 'user-agent': 'skillreg-cli' },
  });
}

/** Turns registry and bundle errors into the lines a person needs: status, detail, every listed problem. */
function explain(output: Output, error: unknown, context = ''): void {
  const prefix = context ? `${context}: ` : '';
  if (error instanceof RegistryError) {
    output.error(
      `${prefix}${error.status} ${error.problem.title || ''} - ${error.problem.detail}`.replace(
        / {2,}/g,
        ' ',
      ),
    );
    for (const issue of error.problem.errors ?? []) output.error(`  ${issue.path}: ${issue.detail}`);
  } else if (error instanceof BundleError) {
    output.error(`${prefix}${error.message}`);
    for (const issue of error.errors)
      if (issue.detail !== error.message) output.error(`  ${issue.path}: ${issue.detail}`);
  } else if (
    error instanceof Error &&
    'cause' in error &&
    (error as { cause?: { code?: string } }).cause?.code
  ) {
    const code = (error as { cause: { code: string } }).cause.code;
    output.error(`${prefix}cannot reach the registry (${code}); check --url / SKILLREG_URL`);
  } else {
    output.error(`${prefix}${error instanceof Error ? error.message : String(error)}`);
  }
}

async function prepareFolder(folder: string): Promise<PreparedBundle> {
  const files = await readSkillFolder(folder);
  return prepareBundle(files, { limits: DEFAULT_LIMITS });
}

function printIssues(output: Output, issues: BundleIssue[], kind: 'error' | 'warning'): void {
  for (const issue of issues) {
    const line = `  ${kind === 'error' ? 'error' : 'warn '}  ${issue.path}: ${issue.detail}`;
    if (kind === 'error') output.error(line);
    else output.info(line);
  }
}

export function buildCli(output: Output): Command {
  const program = new Command('skillreg')
    .description('Publish, sync, pull and validate Agent Skills against a skill-registry server.')
    .addOption(new Option('--url <url>', 'registry base URL').env('SKILLREG_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', 'bearer token (scope publish for writes)').env('SKILLREG_TOKEN'))
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => output.raw(text), writeErr: (text) => output.rawError(text) })
    .exitOverride();

  program
    .command('serve')
    .description('run the registry service (same as npm start; configured by environment variables)')
    .action(async () => {
      const { startServer } = await import('../server.js');
      await startServer();
    });

  program
    .command('migrate')
    .description('apply database migrations to DATABASE_URL (or the embedded database) and exit')
    .action(async () => {
      const { runMigrations } = await import('../scripts/migrate.js');
      await runMigrations(process.env, (line) => output.info(line));
    });

  program
    .command('validate')
    .description(
      'check skills offline with exactly the server rules; <dir> may be one skill or a tree of them',
    )
    .argument('<dir>', 'a skill folder or any folder containing skill folders')
    .action(async (dir: string) => {
      const folders = await findSkillFolders(dir);
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${dir} or below it`);
        throw new ReportedFailure();
      }
      let invalid = 0;
      for (const folder of folders) {
        const label = path.relative(process.cwd(), path.join(folder, 'SKILL.md')) || 'SKILL.md';
        try {
          const prepared = await prepareFolder(folder);
          output.info(
            `ok     ${label}  (${prepared.skill.name}, ${prepared.files.length} file${prepared.files.length === 1 ? '' : 's'}, ${prepared.digest.slice(0, 19)}…)`,
          );
          printIssues(output, prepared.skill.warnings, 'warning');
        } catch (error) {
          invalid += 1;
          if (!(error instanceof BundleError)) throw error;
          output.error(`FAIL   ${label}: ${error.message}`);
          printIssues(output, error.errors, 'error');
          printIssues(output, error.warnings, 'warning');
        }
      }
      output.info(`${folders.length - invalid} valid, ${invalid} invalid`);
      if (invalid > 0) throw new ReportedFailure();
    });

  program
    .command('publish')
    .description('pack one skill folder and publish it (idempotent: unchanged content creates nothing)')
    .argument('<dir>', 'the skill folder (holding SKILL.md)')
    .option('--version <version>', 'publish under this semver version')
    .option('--tag <tag>', 'also point this dist-tag at the version')
    .action(async (dir: string, options: { version?: string; tag?: string }, command: Command) => {
      const client = clientOf(command);
      const prepared = await prepareFolder(dir);
      const bytes = await writeTarGz(prepared.files);
      const result = await client.publish(
        { type: 'tar.gz', bytes },
        { version: options.version, tag: options.tag },
      );
      output.info(
        `${result.created ? 'published' : 'unchanged'}  ${result.name}@${result.version}  ${result.digest}`,
      );
      for (const warning of result.warnings) output.info(`  warn  ${warning.path}: ${warning.detail}`);
    });

  program
    .command('sync')
    .description('find every SKILL.md below <root>, validate and publish each; safe to run on every push')
    .argument(
      '<root>',
      'repository root (searches .claude/skills, .agents/skills, skills/ and every other folder)',
    )
    .option('--dry-run', 'show what would change without publishing')
    .option('--tag <tag>', 'point this dist-tag at every published version')
    .action(async (root: string, options: { dryRun?: boolean; tag?: string }, command: Command) => {
      const client = clientOf(command);
      const folders = await findSkillFolders(root);
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${root} or below it`);
        throw new ReportedFailure();
      }
      const rows: string[][] = [];
      const progress = createProgress(output, folders.length);
      let refused = 0;
      for (const folder of folders) {
        const label = path.relative(root, folder) || '.';
        progress.update(label);
        try {
          const prepared = await prepareFolder(folder);
          if (options.dryRun) {
            rows.push([await dryRunStatus(client, prepared), prepared.skill.name, '-', label]);
            continue;
          }
          const bytes = await writeTarGz(prepared.files);
          const result = await client.publish({ type: 'tar.gz', bytes }, { tag: options.tag });
          rows.push([result.created ? 'published' : 'unchanged', result.name, result.version, label]);
        } catch (error) {
          refused += 1;
          const reason =
            error instanceof RegistryError
              ? `${error.status}: ${error.problem.errors?.[0]?.detail ?? error.problem.detail}`
              : error instanceof BundleError
                ? (error.errors[0]?.detail ?? error.message)
                : error instanceof Error
                  ? error.message
                  : String(error);
          rows.push(['refused', '-', '-', `${label}: ${reason}`]);
          if (error instanceof RegistryError && (error.status === 401 || error.status === 403)) {
            progress.stop();
            explain(output, error, 'sync stopped');
            printTable(output, ['status', 'name', 'version', 'folder / reason'], rows);
            throw new ReportedFailure();
          }
        }
      }
      progress.stop();
      printTable(output, ['status', 'name', 'version', 'folder / reason'], rows);
      const count = (status: string) => rows.filter((row) => row[0] === status).length;
      output.info(
        options.dryRun
          ? `dry run: ${count('would publish')} would publish, ${count('unchanged')} unchanged, ${refused} refused`
          : `${count('published')} published, ${count('unchanged')} unchanged, ${refused} refused`,
      );
      if (refused > 0) throw new ReportedFailure();
    });

  program
    .command('pull')
    .description('download a skill and write its folder byte for byte, verifying the digest')
    .argument('<name>', 'skill name')
    .argument('[dir]', 'target folder (default ./<name>)')
    .option('--version <version>', 'exact version')
    .option('--tag <tag>', 'dist-tag (default latest)')
    .option('--force', 'replace the target folder if it exists and is not empty')
    .action(
      async (
        name: string,
        dir: string | undefined,
        options: { version?: string; tag?: string; force?: boolean },
        command: Command,
      ) => {
        const client = clientOf(command);
        const target = path.resolve(dir ?? name);
        const fetched = await client.getBundle(name, { version: options.version, tag: options.tag });
        const files = await readArchive(fetched.value, 'tar.gz', {
          ...DEFAULT_LIMITS,
          maxUncompressedBytes: 1024 * 1024 * 1024,
          maxFiles: 100_000,
        });
        const digest = bundleDigest(files);
        const expected = fetched.headers.get('x-skill-digest');
        if (expected && expected !== digest) {
          output.error(`digest mismatch: the registry announced ${expected} but the archive holds ${digest}`);
          throw new ReportedFailure();
        }
        const existing = await readdir(target).catch(() => []);
        if (existing.length > 0) {
          if (!options.force) {
            output.error(`${target} exists and is not empty; pass --force to replace it`);
            throw new ReportedFailure();
          }
          await rm(target, { recursive: true, force: true });
        }
        for (const file of files) {
          const destination = path.join(target, ...normalizeEntryPath(file.path).split('/'));
          await mkdir(path.dirname(destination), { recursive: true });
          await writeFile(destination, file.bytes, { mode: file.mode });
        }
        const version = fetched.headers.get('x-skill-version') ?? options.version ?? '?';
        output.info(`pulled ${name}@${version} (${files.length} files, ${digest}) into ${target}`);
      },
    );

  const token = program.command('token').description('manage tokens (needs an admin token)');
  token
    .command('create')
    .description('create a token and print its secret (shown once)')
    .requiredOption('--name <name>', 'what the token is for, e.g. ci-main')
    .addOption(
      new Option('--scope <scope...>', 'scopes').choices(['read', 'publish', 'admin']).makeOptionMandatory(),
    )
    .option('--expires-in-days <days>', 'lifetime in days', (value) => Number.parseInt(value, 10))
    .action(
      async (
        options: { name: string; scope: ('read' | 'publish' | 'admin')[]; expiresInDays?: number },
        command: Command,
      ) => {
        const created = await clientOf(command).createToken({
          name: options.name,
          scopes: options.scope,
          expiresInDays: options.expiresInDays,
        });
        output.info(`created token ${created.id} (${created.name}; scopes ${created.scopes.join(', ')})`);
        output.info(`secret (shown once): ${created.secret}`);
      },
    );
  token
    .command('list')
    .description('list active tokens (never shows secrets)')
    .action(async (_options: unknown, command: Command) => {
      const tokens = await clientOf(command).listTokens();
      printTable(
        output,
        ['id', 'name', 'scopes', 'prefix', 'expires', 'last used'],
        tokens.map((item) => [
          item.id,
          item.name,
          item.scopes.join(','),
          item.prefix,
          item.expiresAt ?? '-',
          item.lastUsedAt ?? '-',
        ]),
      );
    });
  token
    .command('revoke')
    .description('revoke a token by id')
    .argument('<id>', 'token id from token list')
    .action(async (id: string, _options: unknown, command: Command) => {
      await clientOf(command).revokeToken(id);
      output.info(`revoked token ${id}`);
    });

  return program;
}

async function dryRunStatus(client: SkillRegistryClient, prepared: PreparedBundle): Promise<string> {
  try {
    const versions = (await client.listVersions(prepared.skill.name)).value;
    return versions.some((version) => version.digest === prepared.digest) ? 'unchanged' : 'would publish';
  } catch (error) {
    if (error instanceof RegistryError && error.status === 404) return 'would publish';
    throw error;
  }
}

/** Runs the CLI and returns the exit code (tests call this in-process; bin/skillreg.js calls it for real). */
export async function runCli(argv: string[], output: Output): Promise<number> {
  const program = buildCli(output);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof ReportedFailure) return 1;
    const commanderError = error as { code?: string; exitCode?: number };
    if (typeof commanderError.code === 'string' && commanderError.code.startsWith('commander.')) {
      return commanderError.exitCode ?? 1;
    }
    explain(output, error);
    return 1;
  }
}
