import type { Command } from 'commander';
import { writeTarGz } from '../../bundle/archive-write.js';
import { type CliContext, examples, namespaceOption } from '../context.js';
import { prepareFolder, skillFolderOf } from '../local-skill.js';

export function registerPublishCommand(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('publish')
    .description('pack one skill folder and publish it (idempotent: unchanged content creates nothing)')
    .argument('<dir>', 'the skill folder (holding SKILL.md)')
    .option(
      '--version <version>',
      'publish under this semver version (default: metadata.version, else next patch)',
    )
    .option('--tag <tag>', 'also point this dist-tag at the version')
    .addOption(namespaceOption('publish into'))
    .addHelpText(
      'after',
      `\nPrints 'created' (a new version) or 'unchanged' (identical content was already published), then\nname@version and the digest. Symbolic links inside the folder are followed; links outside are refused.\n${examples(
        'skillreg publish ./skills/pdf-tools',
        'skillreg publish ./skills/pdf-tools --version 2.0.0 --tag stable',
        'skillreg publish ./skills/pdf-tools --namespace data-platform',
      )}`,
    )
    .action(async (dir: string, options: { version?: string; tag?: string }, command: Command) => {
      const client = clientOf(command);
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
      // A warn verdict is published and flagged: say what the scan found.
      for (const finding of result.scan?.findings ?? []) {
        output.info(
          `  scan  ${finding.path}${finding.line > 0 ? `:${finding.line}` : ''} ${finding.rule} (${finding.severity}): ${finding.detail}`,
        );
      }
    });
}
