import path from 'node:path';
import type { Command } from 'commander';
import { BundleError, type BundleIssue } from '../../bundle/types.js';
import { findSkillFolders } from '../../services/skill-folder.js';
import { type CliContext, examples, ReportedFailure } from '../context.js';
import { prepareFolder, skillFolderOf } from '../local-skill.js';
import type { Output } from '../output.js';

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

export function registerValidateCommand(program: Command, { output }: CliContext): void {
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
}
