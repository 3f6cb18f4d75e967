import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { readArchive } from '../bundle/archive-read.js';
import { writeTarGz } from '../bundle/archive-write.js';
import { bundleDigest } from '../bundle/digest.js';
import { normalizeEntryPath } from '../bundle/paths.js';
import { type PreparedBundle, prepareBundle } from '../bundle/prepare.js';
import { BundleError, type BundleIssue, DEFAULT_LIMITS } from '../bundle/types.js';
import { chooseVersion } from '../bundle/version.js';
import {
  DEFAULT_RETRY,
  RegistryError,
  type RetryEvent,
  SkillRegistryClient,
  type VersionSummary,
} from '../client/index.js';
import { findSkillFolders, readSkillFolder } from '../services/skill-folder.js';
import { createProgress, type Output, printTable } from './output.js';

const DEFAULT_URL = 'http://127.0.0.1:3000';

function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Thrown for a failure already explained to the user: exit non-zero without a stack trace. */
class ReportedFailure extends Error {}

interface GlobalOptions {
  url: string;
  token?: string;
  retries: number;
}

/** True once `serve` has started listening: the process must then stay alive. */
let serving = false;
export function isServing(): boolean {
  return serving;
}

/** One line saying that a request is waiting to be retried, so a long wait does not look like a hang. */
export function describeRetry(event: RetryEvent): string {
  const seconds =
    event.delayMs >= 10_000 ? Math.round(event.delayMs / 1000) : (event.delayMs / 1000).toFixed(1);
  const why =
    event.status === 429
      ? 'rate limited (429)'
      : event.status === 503
        ? 'registry unavailable (503)'
        : `cannot reach the registry (${event.reason})`;
  return `${why}; retrying ${event.method} ${event.path.split('?')[0]} in ${seconds} s${event.retryAfter ? ' as Retry-After asks' : ''} (attempt ${event.attempt + 1} of ${event.attempts})`;
}

/**
 * The client of a command. `onRetry` says where "waiting" lines go (sync puts them in its progress);
 * by default they go to stderr, so the output of a command stays what it prints on success.
 */
function clientOf(
  command: Command,
  output: Output,
  onRetry: (event: RetryEvent) => void = (event) => output.error(`skillreg: ${describeRetry(event)}`),
): SkillRegistryClient {
  const options = command.optsWithGlobals<GlobalOptions>();
  return new SkillRegistryClient({
    url: options.url,
    token: options.token || undefined,
    headers: { 'user-agent': `skillreg-cli/${packageVersion()}` },
    retry: { retries: options.retries, onRetry },
  });
}

function parseRetries(value: string): number {
  const retries = Number(value);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10)
    throw new InvalidArgumentError('expected a whole number from 0 to 10');
  return retries;
}

function networkCause(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || !error.message.includes('fetch failed')) return undefined;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? 'network error';
}

/** Turns registry and bundle errors into the lines a person needs: status, detail, every listed problem. */
function explain(output: Output, error: unknown, context = '', url?: string): void {
  const prefix = context ? `${context}: ` : '';
  if (error instanceof RegistryError) {
    const title = error.problem.title ? ` ${error.problem.title}` : '';
    output.error(`${prefix}${error.status}${title} - ${error.problem.detail}`);
    for (const issue of error.problem.errors ?? []) {
      if (issue.detail !== error.problem.detail) output.error(`  ${issue.path}: ${issue.detail}`);
    }
  } else if (error instanceof BundleError) {
    output.error(`${prefix}${error.message}`);
    for (const issue of error.errors)
      if (issue.detail !== error.message) output.error(`  ${issue.path}: ${issue.detail}`);
  } else if (networkCause(error)) {
    output.error(
      `${prefix}cannot reach the registry${url ? ` at ${url}` : ''} (${networkCause(error)}); check --url / SKILLREG_URL`,
    );
  } else {
    output.error(`${prefix}${error instanceof Error ? error.message : String(error)}`);
  }
}

/** One line saying why a skill was refused, for the sync summary. */
function reasonOf(error: unknown): string {
  if (error instanceof RegistryError) {
    return `${error.status}: ${error.problem.errors?.[0]?.detail ?? error.problem.detail}`;
  }
  if (error instanceof BundleError) return error.errors[0]?.detail ?? error.message;
  const cause = networkCause(error);
  if (cause) return `cannot reach the registry (${cause})`;
  return error instanceof Error ? error.message : String(error);
}

/** `publish path/to/SKILL.md` means its folder. */
async function skillFolderOf(dir: string): Promise<string> {
  const stats = await stat(dir).catch(() => undefined);
  return stats?.isFile() && path.basename(dir) === 'SKILL.md' ? path.dirname(dir) : dir;
}

/**
 * Reads and validates a folder exactly as the server would: the same normalisation, validation and
 * digest (src/bundle/prepare.ts), plus the frontmatter metadata.version check the server makes at publish.
 */
async function prepareFolder(folder: string): Promise<PreparedBundle> {
  const files = await readSkillFolder(folder);
  const prepared = prepareBundle(files, { limits: DEFAULT_LIMITS });
  const choice = chooseVersion({ metadataVersion: prepared.skill.metadataVersion, existing: [] });
  if (choice.warnings.length > 0) {
    prepared.skill = { ...prepared.skill, warnings: [...prepared.skill.warnings, ...choice.warnings] };
  }
  return prepared;
}

/** How a folder is shown: relative to the working directory when below it, else as given. */
function displayPath(folder: string): string {
  const relative = path.relative(process.cwd(), folder);
  if (relative === '') return '.';
  return relative.startsWith('..') || path.isAbsolute(relative) ? folder : relative;
}

function printIssues(output: Output, issues: BundleIssue[], kind: 'error' | 'warning'): void {
  for (const issue of issues) {
    const line = `  ${kind === 'error' ? 'error' : 'warn '}  ${issue.path}: ${issue.detail}`;
    if (kind === 'error') output.error(line);
    else output.info(line);
  }
}

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}

export function buildCli(output: Output): Command {
  const program = new Command('skillreg')
    .description(
      'Publish, sync, pull and validate Agent Skills against a skill-registry server, or run the server.',
    )
    .version(packageVersion(), '-V', 'print the skillreg version')
    .addOption(new Option('--url <url>', 'registry base URL').env('SKILLREG_URL').default(DEFAULT_URL))
    .addOption(
      new Option('--token <token>', 'bearer token; writes need scope publish, token commands admin').env(
        'SKILLREG_TOKEN',
      ),
    )
    .addOption(
      new Option(
        '--retries <n>',
        'retries of a request the registry refuses for now (429, 503) or that cannot connect; 0 disables',
      )
        .env('SKILLREG_RETRIES')
        .argParser(parseRetries)
        .default(DEFAULT_RETRY.retries),
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({ writeOut: (text) => output.raw(text), writeErr: (text) => output.rawError(text) })
    .exitOverride()
    .addHelpText(
      'after',
      [
        '',
        'Environment:',
        '  SKILLREG_URL      registry base URL (same as --url)',
        '  SKILLREG_TOKEN    bearer token (same as --token)',
        '  SKILLREG_RETRIES  retries after 429, 503 or a failed connection (same as --retries; default 3);',
        '                    each wait follows Retry-After, at most 60 s in all per request',
        '  CI                when set, progress is printed as plain lines instead of a bar',
        examples(
          'skillreg validate .',
          'SKILLREG_TOKEN=... skillreg sync . --dry-run',
          'skillreg pull pdf-tools ./skills/pdf-tools',
          'skillreg token create --name ci-main --scope publish',
        ),
        'Exit code: 0 on success, 1 on any failure (the reason is printed on stderr).',
      ].join('\n'),
    );

  program
    .command('serve')
    .description('run the registry service (same as npm start; configured by PORT, HOST, DATABASE_URL, ...)')
    .addHelpText(
      'after',
      `\nEnvironment: PORT (3000), HOST (127.0.0.1), DATABASE_URL (else embedded PGlite in SKILLREG_DATA_DIR),\nSKILLREG_ADMIN_TOKEN, SKILLREG_SEED_DIR, SKILLREG_PUBLIC_URL, LOG_LEVEL; see README.md.\n${examples('PORT=8080 SKILLREG_ADMIN_TOKEN=change-me skillreg serve')}`,
    )
    .action(async () => {
      const { startServer } = await import('../server.js');
      await startServer();
      serving = true;
    });

  program
    .command('migrate')
    .description('apply pending database migrations to DATABASE_URL (or the embedded database) and exit')
    .addHelpText(
      'after',
      `\nSafe to run from several jobs at once (migrations run under a PostgreSQL advisory lock).\n${examples(
        'DATABASE_URL=postgres://user:pass@db/skills skillreg migrate',
        'SKILLREG_DATA_DIR=./.data skillreg migrate',
      )}`,
    )
    .action(async () => {
      const { runMigrations } = await import('../scripts/migrate.js');
      await runMigrations(process.env, (line) => output.info(line));
    });

  program
    .command('validate')
    .description('check skills offline with exactly the server rules; <dir> may be one skill or a whole tree')
    .argument('<dir>', 'a skill folder (holding SKILL.md) or any folder with skill folders below it')
    .addHelpText(
      'after',
      `\nPrints every error and warning per file with how to fix it. Exit code 1 if any skill is invalid.\nNo network access, no token needed.\n${examples('skillreg validate .', 'skillreg validate .claude/skills/my-skill')}`,
    )
    .action(async (dir: string) => {
      const folders = await findSkillFolders(await skillFolderOf(dir));
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${dir} or below it`);
        throw new ReportedFailure();
      }
      let invalid = 0;
      for (const folder of folders) {
        const label = displayPath(folder);
        try {
          const prepared = await prepareFolder(folder);
          const count = prepared.files.length;
          output.info(
            `ok     ${label}  (${prepared.skill.name}, ${count} file${count === 1 ? '' : 's'}, ${prepared.digest})`,
          );
          printIssues(output, prepared.skill.warnings, 'warning');
        } catch (error) {
          if (!(error instanceof BundleError)) throw error;
          invalid += 1;
          output.error(`FAIL   ${label}`);
          printIssues(
            output,
            error.errors.length > 0 ? error.errors : [{ path: '', detail: error.message }],
            'error',
          );
          printIssues(output, error.warnings, 'warning');
        }
      }
      output.info(
        `${folders.length - invalid} valid, ${invalid} invalid (${folders.length} skill${folders.length === 1 ? '' : 's'} checked)`,
      );
      if (invalid > 0) throw new ReportedFailure();
    });

  program
    .command('publish')
    .description('pack one skill folder and publish it (idempotent: unchanged content creates nothing)')
    .argument('<dir>', 'the skill folder (holding SKILL.md)')
    .option(
      '--version <version>',
      'publish under this semver version (default: metadata.version, else next patch)',
    )
    .option('--tag <tag>', 'also point this dist-tag at the version')
    .addHelpText(
      'after',
      `\nPrints 'created' (a new version) or 'unchanged' (identical content was already published), then\nname@version and the digest. Symbolic links inside the folder are followed; links outside are refused.\n${examples(
        'skillreg publish ./skills/pdf-tools',
        'skillreg publish ./skills/pdf-tools --version 2.0.0 --tag stable',
      )}`,
    )
    .action(async (dir: string, options: { version?: string; tag?: string }, command: Command) => {
      const client = clientOf(command, output);
      const prepared = await prepareFolder(await skillFolderOf(dir));
      const bytes = await writeTarGz(prepared.files);
      const result = await client.publish(
        { type: 'tar.gz', bytes },
        { version: options.version, tag: options.tag },
      );
      output.info(
        `${result.created ? 'created  ' : 'unchanged'}  ${result.name}@${result.version}  ${result.digest}`,
      );
      for (const warning of result.warnings) output.info(`  warn  ${warning.path}: ${warning.detail}`);
    });

  program
    .command('sync')
    .description('find every SKILL.md below <root>, validate and publish each; safe to run on every push')
    .argument('<root>', 'repository root')
    .option('--dry-run', 'show what would change without publishing anything')
    .option('--tag <tag>', 'point this dist-tag at every published version')
    .addHelpText(
      'after',
      [
        '',
        'Searches every folder below <root> (including .claude/skills, .agents/skills and skills/; never',
        '.git or node_modules); a folder holding SKILL.md is one skill. Every valid skill is published even',
        'when others are refused; identical content is reported as unchanged and creates no version.',
        'Prints a progress bar on a terminal and plain lines in CI, then a summary table.',
        'Exit code 1 if any skill was refused (each with its reason) or the token was rejected.',
        examples('skillreg sync .', 'skillreg sync . --dry-run', 'skillreg sync . --tag stable'),
      ].join('\n'),
    )
    .action(async (root: string, options: { dryRun?: boolean; tag?: string }, command: Command) => {
      const { url } = command.optsWithGlobals<GlobalOptions>();
      const folders = await findSkillFolders(root);
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${root} or below it`);
        throw new ReportedFailure();
      }
      const headers = ['status', 'name', 'version', 'folder', 'reason'];
      const rows: string[][] = [];
      const progress = createProgress(output, folders.length);
      // A wait before a retry shows in the progress (a line in CI, the bar's label on a terminal).
      const client = clientOf(command, output, (event) => progress.note(`waiting: ${describeRetry(event)}`));
      let warnings = 0;
      for (const folder of folders) {
        const label = path.relative(root, folder) || '.';
        progress.update(label);
        let prepared: PreparedBundle | undefined;
        try {
          prepared = await prepareFolder(folder);
          warnings += prepared.skill.warnings.length;
          if (options.dryRun) {
            const planned = await dryRunStatus(client, prepared);
            rows.push([planned.status, prepared.skill.name, planned.version, label, planned.reason ?? '']);
            continue;
          }
          const bytes = await writeTarGz(prepared.files);
          const result = await client.publish({ type: 'tar.gz', bytes }, { tag: options.tag });
          rows.push([result.created ? 'published' : 'unchanged', result.name, result.version, label, '']);
        } catch (error) {
          rows.push(['refused', prepared?.skill.name ?? '-', '-', label, reasonOf(error)]);
          // 429 and 503 get here only once the retries are spent: the next skills would wait as long.
          const fatal =
            (error instanceof RegistryError && [401, 403, 429, 503].includes(error.status)) ||
            networkCause(error) !== undefined;
          if (fatal) {
            // Every other skill would fail the same way: stop and say why.
            progress.stop();
            printTable(output, headers, rows);
            explain(output, error, 'sync stopped', url);
            throw new ReportedFailure();
          }
        }
      }
      progress.stop();
      printTable(output, headers, rows);
      const count = (status: string) => rows.filter((row) => row[0] === status).length;
      const refused = count('refused');
      output.info(
        options.dryRun
          ? `dry run: ${count('would publish')} would publish, ${count('unchanged')} unchanged, ${refused} refused; nothing was published`
          : `${count('published')} published, ${count('unchanged')} unchanged, ${refused} refused`,
      );
      if (warnings > 0) output.info(`${warnings} warning(s): run 'skillreg validate ${root}' to see them`);
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
    .addHelpText(
      'after',
      `\nRefuses to write into a non-empty folder unless --force is given (which replaces it).\n${examples(
        'skillreg pull pdf-tools',
        'skillreg pull pdf-tools .claude/skills/pdf-tools --version 1.2.0',
      )}`,
    )
    .action(
      async (
        name: string,
        dir: string | undefined,
        options: { version?: string; tag?: string; force?: boolean },
        command: Command,
      ) => {
        const client = clientOf(command, output);
        const target = path.resolve(dir ?? name);
        const existing = await stat(target).catch(() => undefined);
        if (existing && !options.force) {
          const empty = existing.isDirectory() && (await readdir(target)).length === 0;
          if (!empty) {
            output.error(
              `${target} ${existing.isDirectory() ? 'exists and is not empty' : 'exists and is not a folder'}; pass --force to replace it`,
            );
            throw new ReportedFailure();
          }
        }
        const fetched = await client.getBundle(name, { version: options.version, tag: options.tag });
        const files = await readArchive(fetched.value, 'tar.gz', {
          ...DEFAULT_LIMITS,
          maxUncompressedBytes: 1024 * 1024 * 1024,
          maxFiles: 100_000,
        });
        const digest = bundleDigest(files);
        const version = fetched.headers.get('x-skill-version') ?? options.version;
        const expected =
          fetched.headers.get('x-skill-digest') ??
          (await client.getSkill(name, version ? { version } : { tag: options.tag })).value.digest;
        if (expected !== digest) {
          output.error(`digest mismatch: the registry announced ${expected} but the archive holds ${digest}`);
          throw new ReportedFailure();
        }
        // Write next to the target and move it into place, so a failure never leaves half a skill.
        const staging = `${target}.skillreg-${process.pid}-${Date.now()}`;
        try {
          for (const file of files) {
            const destination = path.join(staging, ...normalizeEntryPath(file.path).split('/'));
            await mkdir(path.dirname(destination), { recursive: true });
            await writeFile(destination, file.bytes, { mode: file.mode });
          }
          await mkdir(staging, { recursive: true });
          if (existing) await rm(target, { recursive: true, force: true });
          await mkdir(path.dirname(target), { recursive: true });
          await rename(staging, target);
        } finally {
          await rm(staging, { recursive: true, force: true });
        }
        output.info(`pulled ${name}@${version ?? '?'} (${files.length} files, ${digest}) into ${target}`);
      },
    );

  const token = program
    .command('token')
    .description('create, list and revoke tokens (needs an admin token)')
    .addHelpText(
      'after',
      examples(
        'skillreg token create --name ci-main --scope publish',
        'skillreg token list',
        'skillreg token revoke 0b5c2f9e-6a1d-4c3b-9f7e-2d8a1c4e5f60',
      ),
    );
  token
    .command('create')
    .description('create a token and print its secret (shown once; only its hash is stored)')
    .requiredOption('--name <name>', 'what the token is for, e.g. ci-main')
    .addOption(
      new Option('--scope <scope...>', 'one or more scopes')
        .choices(['read', 'publish', 'admin'])
        .makeOptionMandatory(),
    )
    .option('--expires-in-days <days>', 'lifetime in days (default: no expiry)', (value) => {
      const days = Number(value);
      if (!Number.isInteger(days) || days < 1)
        throw new InvalidArgumentError('expected a whole number of days >= 1');
      return days;
    })
    .option('--json', 'print the created token as JSON (secret included)')
    .addHelpText(
      'after',
      examples(
        'skillreg token create --name ci-main --scope publish',
        'skillreg token create --name reader --scope read --expires-in-days 90 --json',
      ),
    )
    .action(
      async (
        options: {
          name: string;
          scope: ('read' | 'publish' | 'admin')[];
          expiresInDays?: number;
          json?: boolean;
        },
        command: Command,
      ) => {
        const created = await clientOf(command, output).createToken({
          name: options.name,
          scopes: options.scope,
          expiresInDays: options.expiresInDays,
        });
        if (options.json) {
          output.info(JSON.stringify(created, null, 2));
          return;
        }
        output.info(`created token ${created.id} (${created.name}; scopes ${created.scopes.join(', ')})`);
        output.info('secret (shown once, store it now):');
        output.info(created.secret);
      },
    );
  token
    .command('list')
    .description('list active tokens (never shows secrets)')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', examples('skillreg token list', 'skillreg token list --json'))
    .action(async (options: { json?: boolean }, command: Command) => {
      const tokens = await clientOf(command, output).listTokens();
      if (options.json) {
        output.info(JSON.stringify(tokens, null, 2));
        return;
      }
      printTable(
        output,
        ['id', 'name', 'scopes', 'prefix', 'created by', 'expires', 'last used'],
        tokens.map((item) => [
          item.id,
          item.name,
          item.scopes.join(','),
          item.prefix,
          item.createdBy,
          item.expiresAt ?? '-',
          item.lastUsedAt ?? '-',
        ]),
      );
    });
  token
    .command('revoke')
    .description('revoke a token by id (takes effect on the next request)')
    .argument('<id>', 'token id, from token list')
    .addHelpText('after', examples('skillreg token revoke 0b5c2f9e-6a1d-4c3b-9f7e-2d8a1c4e5f60'))
    .action(async (id: string, _options: unknown, command: Command) => {
      await clientOf(command, output).revokeToken(id);
      output.info(`revoked token ${id}`);
    });

  return program;
}

interface PlannedPublish {
  status: 'would publish' | 'unchanged' | 'refused';
  version: string;
  reason?: string;
}

/** What a publish would do, decided with the server's own version rules (src/bundle/version.ts). */
async function dryRunStatus(client: SkillRegistryClient, prepared: PreparedBundle): Promise<PlannedPublish> {
  let versions: VersionSummary[];
  try {
    versions = (await client.listVersions(prepared.skill.name)).value;
  } catch (error) {
    if (!(error instanceof RegistryError && error.status === 404)) throw error;
    versions = [];
  }
  const identical = versions.filter((summary) => summary.digest === prepared.digest);
  const live = identical.filter((summary) => !summary.yanked);
  const same = (live.length > 0 ? live : identical)[0];
  if (same) return { status: 'unchanged', version: same.version };
  const choice = chooseVersion({
    metadataVersion: prepared.skill.metadataVersion,
    existing: versions.map((summary) => summary.version),
  });
  if (versions.some((summary) => summary.version === choice.version)) {
    return {
      status: 'refused',
      version: choice.version,
      reason: `409: version ${choice.version} already exists with different content; bump metadata.version`,
    };
  }
  return { status: 'would publish', version: choice.version };
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
    explain(output, error, '', program.opts<GlobalOptions>().url);
    return 1;
  }
}
