import path from 'node:path';
import type { Command } from 'commander';
import { BundleError, type BundleIssue } from '../../bundle/types.js';
import { RULES_VERSION, SEVERITIES, type Severity, scanBundle } from '../../scan/index.js';
import { findSkillFolders } from '../../services/skill-folder.js';
import { type CliContext, examples, ReportedFailure } from '../context.js';
import { describeDuplicate, duplicateNames, prepareFolder, skillFolderOf } from '../local-skill.js';
import { type Output, printFindings, printWarnings } from '../output.js';

/** How a folder is shown: relative to the working directory when below it, else as given. */
function displayPath(folder: string): string {
  const relative = path.relative(process.cwd(), folder);
  if (relative === '') return '.';
  return relative.startsWith('..') || path.isAbsolute(relative) ? folder : relative;
}

function printErrors(output: Output, issues: BundleIssue[]): void {
  for (const issue of issues) output.error(`  error  ${issue.path}: ${issue.detail}`);
}

/** SKILLREG_SCAN_BLOCK_SEVERITY, as the server reads it (default high). */
function blockSeverity(): Severity {
  const value = process.env.SKILLREG_SCAN_BLOCK_SEVERITY?.trim().toLowerCase();
  return value && (SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : 'high';
}

export function registerValidateCommand(program: Command, { output }: CliContext): void {
  program
    .command('validate')
    .description('check skills offline with exactly the server rules; <dir> may be one skill or a whole tree')
    .argument('<dir>', 'a skill folder (holding SKILL.md) or any folder with skill folders below it')
    .addHelpText(
      'after',
      `\nPrints each valid skill on stdout; every error and warning per file with how to fix it, and what the\nregistry's publish-time scan finds (the same rules: hidden instructions, download-and-run, credential\ntheft, secrets, binaries...) with its file and line, on stderr. A folder is read as the registry reads\nan archive of it: a SKILL.md without a name takes the folder's, a folder named otherwise is warned about.\nExit code 1 if any skill is invalid, the scan would quarantine it (findings at\nSKILLREG_SCAN_BLOCK_SEVERITY, default high, or worse) or two folders declare the same name (sync\nrefuses that tree). No network access, no token needed.\n${examples('skillreg validate .', 'skillreg validate .claude/skills/my-skill')}`,
    )
    .action(async (dir: string) => {
      const folders = await findSkillFolders(await skillFolderOf(dir));
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${dir} or below it`);
        throw new ReportedFailure();
      }
      let invalid = 0;
      let blocked = 0;
      let warned = 0;
      const blockAt = blockSeverity();
      const declared: { name: string; folder: string }[] = [];
      for (const folder of folders) {
        const label = displayPath(folder);
        try {
          const prepared = await prepareFolder(folder);
          declared.push({ name: prepared.skill.name, folder: label });
          const count = prepared.files.length;
          const scan = await scanBundle(prepared.files, { blockSeverity: blockAt });
          const summary = `${label}  (${prepared.skill.name}, ${count} file${count === 1 ? '' : 's'}, ${prepared.digest})`;
          if (scan.verdict === 'block') {
            blocked += 1;
            output.error(`BLOCK  ${summary}: the registry would quarantine it`);
          } else {
            if (scan.verdict === 'warn') warned += 1;
            output.info(`ok     ${summary}`);
          }
          // Warnings and findings on stderr, each naming its folder when a tree is checked.
          const where = folders.length > 1 ? label : undefined;
          printWarnings(output, prepared.skill.warnings, where);
          printFindings(
            output,
            scan.findings.filter((finding) => finding.severity !== 'low'),
            where,
          );
        } catch (error) {
          if (!(error instanceof BundleError)) throw error;
          invalid += 1;
          output.error(`FAIL   ${label}`);
          printErrors(output, error.errors.length > 0 ? error.errors : [{ path: '', detail: error.message }]);
          printWarnings(output, error.warnings);
        }
      }
      // sync refuses such a tree: say so here first.
      const duplicates = duplicateNames(declared);
      for (const duplicate of duplicates) output.error(`FAIL   ${describeDuplicate(duplicate)}`);
      output.info(
        `${folders.length - invalid} valid, ${invalid} invalid (${folders.length} skill${folders.length === 1 ? '' : 's'} checked)${duplicates.length > 0 ? `; ${duplicates.length} name${duplicates.length === 1 ? '' : 's'} declared twice` : ''}`,
      );
      if (blocked + warned > 0) {
        output.info(`scan (rules ${RULES_VERSION}): ${blocked} blocked, ${warned} with warnings`);
      }
      if (invalid > 0 || blocked > 0 || duplicates.length > 0) throw new ReportedFailure();
    });
}
