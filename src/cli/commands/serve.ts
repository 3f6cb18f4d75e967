import type { Command } from 'commander';
import { examples } from '../context.js';

/** True once `serve` has started listening: the process must then stay alive. */
let serving = false;
export function isServing(): boolean {
  return serving;
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the registry service (same as npm start; configured by PORT, HOST, DATABASE_URL, ...)')
    .addHelpText(
      'after',
      `\nEnvironment: PORT (3000), HOST (127.0.0.1), DATABASE_URL (else embedded PGlite in SKILLREG_DATA_DIR),\nSKILLREG_ADMIN_TOKEN, SKILLREG_SEED_DIR, SKILLREG_PUBLIC_URL, LOG_LEVEL; see README.md.\n${examples('PORT=8080 SKILLREG_ADMIN_TOKEN=change-me skillreg serve')}`,
    )
    .action(async () => {
      const { startServer } = await import('../../server.js');
      await startServer();
      serving = true;
    });
}
