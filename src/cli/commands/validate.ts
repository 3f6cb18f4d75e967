import path from 'node:path';
import type { Command } from 'commander';
import { BundleError, type BundleIssue } from '../../bundle/types.js';
import { type Finding, RULES_VERSION, SEVERITIES, type Severity, scanBundle } from '../../scan/index.js';
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

function printFindings(output: Output, findings: readonly Finding[]): void {
  for (const finding of findings) {
    const line = `  ${finding.severity.padEnd(8)}  ${finding.path}${finding.line > 0 ? `:${finding.line}` : ''}  ${finding.rule}: ${finding.detail}`;
    if (finding.severity === 'high' || finding.severity === 'critical') output.error(line);
    else output.info(line);
  }
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
      `\nPrints every error and warning per file with how to fix it, and what the registry's publish-time scan\nfinds (the same rules: hidden instructions, download-and-run, credential theft, secrets, binaries...),\neach with its file and line. Exit code 1 if any skill is invalid or the scan would quarantine it\n(findings at SKILLREG_SCAN_BLOCK_SEVERITY, default high, or worse). No network access, no token needed.\n${examples('skillreg validate .', 'skillreg validate .claude/skills/my-skill')}`,
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
      for (const folder of folders) {
        const label = displayPath(folder);
        try {
          const prepared = await prepareFolder(folder);
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
          printIssues(output, prepared.skill.warnings, 'warning');
          printFindings(
            output,
            scan.findings.filter((finding) => finding.severity !== 'low'),
          );
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
      if (blocked + warned > 0) {
        output.info(`scan (rules ${RULES_VERSION}): ${blocked} blocked, ${warned} with warnings`);
      }
      if (invalid > 0 || blocked > 0) throw new ReportedFailure();
    });
}
