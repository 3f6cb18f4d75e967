import type { Command } from 'commander';
import { type CliContext, examples, namespaceOption } from '../context.js';
import { archiveOf, prepareFolder, skillFolderOf } from '../local-skill.js';
import { oidcOptions, publishingClient } from '../oidc.js';
import { printFindings, printWarnings } from '../output.js';

export function registerPublishCommand(program: Command, context: CliContext): void {
  const { output } = context;
  const command = program
    .command('publish')
    .description('pack one skill folder and publish it (idempotent: unchanged content creates nothing)')
    .argument('<dir>', 'the skill folder (holding SKILL.md)')
    .option(
      '--version <version>',
      'publish under this semver version (default: metadata.version, else next patch)',
    )
    .option('--tag <tag>', 'also point this dist-tag at the version')
    .addOption(namespaceOption('publish into'));
  for (const option of oidcOptions()) command.addOption(option);
  command
    .addHelpText(
      'after',
      `\nPrints 'created' (a new version) or 'unchanged' (identical content was already published), then\nname@version and the digest; the registry's warnings go to stderr. The folder is sent under its own\nname, as 'tar -C parent folder' would: a SKILL.md without a name takes the folder's (with a warning).\nSymbolic links inside the folder are followed; links outside are refused.\n${examples(
        'skillreg publish ./skills/pdf-tools',
        'skillreg publish ./skills/pdf-tools --version 2.0.0 --tag stable',
        'skillreg publish ./skills/pdf-tools --namespace data-platform',
        'skillreg publish ./skills/pdf-tools --oidc   # in GitHub Actions, no stored secret',
      )}`,
    )
    .action(async (dir: string, options: { version?: string; tag?: string }, command: Command) => {
      const prepared = await prepareFolder(await skillFolderOf(dir));
      const client = await publishingClient(command, context);
      const result = await client.publish(
        { type: 'tar.gz', bytes: await archiveOf(prepared) },
        { version: options.version, tag: options.tag },
      );
      output.info(
        `${result.created ? 'created  ' : 'unchanged'}  ${result.name}@${result.version}  ${result.digest}`,
      );
      // The server's own warnings (the same rules validate applies), then what the scan found in a
      // version published with a warn verdict: both on stderr, the result alone on stdout.
      printWarnings(output, result.warnings);
      printFindings(output, result.scan?.findings ?? []);
    });
}
