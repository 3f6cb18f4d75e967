import type { Command } from 'commander';
import { type CliContext, examples } from '../context.js';

export function registerMigrateCommand(program: Command, { output }: CliContext): void {
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
      const { runMigrations } = await import('../../scripts/migrate.js');
      await runMigrations(process.env, (line) => output.info(line));
    });
}
