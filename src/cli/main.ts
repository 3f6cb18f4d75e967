import { Command } from 'commander';
import { packageVersion } from '../process/package-version.js';
import { registerCatalogueCommands } from './commands/catalogue.js';
import { registerInfoCommand } from './commands/info.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerPublishCommand } from './commands/publish.js';
import { registerPullCommand } from './commands/pull.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSyncCommand } from './commands/sync.js';
import { registerTokenCommands } from './commands/token.js';
import { registerTrustedPublisherCommands } from './commands/trusted-publisher.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerVerifyCommand } from './commands/verify.js';
import { registerVersionCommands } from './commands/versions.js';
import { registerViewCommands } from './commands/view.js';
import {
  addGlobalOptions,
  createContext,
  examples,
  explain,
  type GlobalOptions,
  ReportedFailure,
} from './context.js';
import type { Output } from './output.js';

export { isServing } from './commands/serve.js';
export { describeRetry } from './context.js';

export function buildCli(output: Output): Command {
  const program = new Command('skillreg')
    .description(
      'Publish, sync, pull and validate Agent Skills against a skill-registry server, browse and manage it (list, search, info, tag, yank, view), or run the server.',
    )
    .version(packageVersion(), '-V', 'print the skillreg version');
  // --version as well, but only before a command (runCli answers it): publish, pull, verify and info
  // have their own --version <version>, which commander would otherwise take as this one.
  const versionOption = program.options.find((option) => option.short === '-V');
  if (versionOption) versionOption.flags = '-V, --version';
  addGlobalOptions(program)
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({ writeOut: (text) => output.raw(text), writeErr: (text) => output.rawError(text) })
    .exitOverride()
    .addHelpText(
      'after',
      [
        '',
        'Environment:',
        '  SKILLREG_URL        registry base URL (same as --url)',
        '  SKILLREG_TOKEN      bearer token (same as --token)',
        '  SKILLREG_RETRIES    retries after 429, 503 or a failed connection (same as --retries; default 3);',
        '                      each wait follows Retry-After, at most 60 s in all per request',
        '  SKILLREG_NAMESPACE  namespace to read or write (same as --namespace; default: default)',
        '  SKILLREG_VIEW       view to read through (same as --view on list, search, info, pull)',
        '  CI                  when set, progress is printed as plain lines instead of a bar',
        examples(
          'skillreg validate .',
          'SKILLREG_TOKEN=... skillreg sync . --dry-run',
          'skillreg search extract tables from pdf',
          'skillreg pull pdf-tools ./skills/pdf-tools',
          'skillreg token create --name ci-main --scope publish',
        ),
        'Results go to stdout; failures, warnings and waits to stderr. Exit code: 0 on success, 1 on any',
        'failure (the reason is printed on stderr). Piped to a reader that closes early (| head), it ends',
        'quietly with exit code 0.',
      ].join('\n'),
    );

  // Registered in this order so that --help lists them so.
  const context = createContext(output);
  registerServeCommand(program);
  registerMigrateCommand(program, context);
  registerValidateCommand(program, context);
  registerPublishCommand(program, context);
  registerSyncCommand(program, context);
  registerPullCommand(program, context);
  registerCatalogueCommands(program, context);
  registerInfoCommand(program, context);
  registerVersionCommands(program, context);
  registerViewCommands(program, context);
  registerVerifyCommand(program, context);
  registerTokenCommands(program, context);
  registerTrustedPublisherCommands(program, context);
  return program;
}

/**
 * Whether the arguments ask for the version: `--version` before any command name (skipping the
 * values of the global options that take one, as in `--url http://x --version`).
 */
function asksForVersion(program: Command, argv: string[]): boolean {
  for (let at = 0; at < argv.length; at += 1) {
    const arg = argv[at]!;
    if (arg === '--version') return true;
    if (arg === '--' || !arg.startsWith('-')) return false;
    const flag = arg.split('=')[0];
    const option = program.options.find((candidate) => candidate.long === flag || candidate.short === flag);
    if (option && (option.required || option.optional) && !arg.includes('=')) at += 1;
  }
  return false;
}

/** Runs the CLI and returns the exit code (tests call this in-process; bin/skillreg.js calls it for real). */
export async function runCli(argv: string[], output: Output): Promise<number> {
  const program = buildCli(output);
  if (asksForVersion(program, argv)) {
    output.info(packageVersion());
    return 0;
  }
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
