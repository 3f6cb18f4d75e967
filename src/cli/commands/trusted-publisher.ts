import type { Command } from 'commander';
import { GITHUB_ACTIONS_ISSUER } from '../../domain/trusted-publishing.js';
import { type CliContext, examples } from '../context.js';
import { printJson, printTable } from '../output.js';

/** `skillreg trusted-publisher`: bind namespaces to CI identities (trusted publishing; admin). */
export function registerTrustedPublisherCommands(program: Command, { output, clientOf }: CliContext): void {
  const trusted = program
    .command('trusted-publisher')
    .description('let a CI identity publish into a namespace without a stored secret (needs an admin token)')
    .addHelpText(
      'after',
      `\nA job of the bound repository (GitHub Actions: permissions id-token: write) then runs\n'skillreg sync . --namespace <namespace> --oidc'.\n${examples(
        'skillreg trusted-publisher add data-platform github-main --repository acme/skills --workflow-ref acme/skills/.github/workflows/skills-sync.yml@refs/heads/main',
        'skillreg trusted-publisher list data-platform',
        'skillreg trusted-publisher remove data-platform github-main',
      )}`,
    );
  trusted
    .command('add')
    .description('create or replace a binding: every claim given must match the ID token exactly')
    .argument('<namespace>', 'the namespace the CI identity may publish into')
    .argument('<id>', 'a name for the binding, e.g. github-main')
    .requiredOption('--repository <owner/name>', "the token's repository claim, e.g. acme/skills")
    .option(
      '--workflow-ref <ref>',
      'the workflow file and ref, e.g. acme/skills/.github/workflows/skills-sync.yml@refs/heads/main',
    )
    .option('--ref <ref>', 'the git ref the job runs on, e.g. refs/heads/main')
    .option('--environment <name>', 'the deployment environment the job runs in')
    .option(
      '--issuer <url>',
      'the OIDC issuer (one of the registry SKILLREG_OIDC_ISSUERS)',
      GITHUB_ACTIONS_ISSUER,
    )
    .option('--json', 'print the binding as JSON')
    .action(
      async (
        namespace: string,
        id: string,
        options: {
          repository: string;
          workflowRef?: string;
          ref?: string;
          environment?: string;
          issuer: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const binding = await clientOf(command).putTrustedPublisher(namespace, id, {
          issuer: options.issuer,
          claims: {
            repository: options.repository,
            ...(options.workflowRef ? { workflow_ref: options.workflowRef } : {}),
            ...(options.ref ? { ref: options.ref } : {}),
            ...(options.environment ? { environment: options.environment } : {}),
          },
        });
        if (options.json) return printJson(output, binding);
        output.info(
          `bound ${namespace}/${binding.id}: ${describeClaims(binding.claims)} (issuer ${binding.issuer})`,
        );
      },
    );
  trusted
    .command('list')
    .description("list a namespace's trusted publishers")
    .argument('<namespace>')
    .option('--json', 'print the list as JSON')
    .action(async (namespace: string, options: { json?: boolean }, command: Command) => {
      const items = await clientOf(command).listTrustedPublishers(namespace);
      if (options.json) return printJson(output, items);
      if (items.length === 0) {
        output.info(`no trusted publishers in ${namespace}`);
        return;
      }
      printTable(
        output,
        ['id', 'claims', 'issuer', 'updated'],
        items.map((item) => [item.id, describeClaims(item.claims), item.issuer, item.updatedAt]),
      );
    });
  trusted
    .command('remove')
    .description('remove a binding (tokens already exchanged live out their minutes)')
    .argument('<namespace>')
    .argument('<id>')
    .action(async (namespace: string, id: string, _options: unknown, command: Command) => {
      await clientOf(command).deleteTrustedPublisher(namespace, id);
      output.info(`removed ${namespace}/${id}`);
    });
}

function describeClaims(claims: Record<string, string>): string {
  return Object.entries(claims)
    .map(([claim, value]) => `${claim}=${value}`)
    .join(' ');
}
