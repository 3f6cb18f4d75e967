import { type Command, InvalidArgumentError, Option } from 'commander';
import { type CliContext, examples } from '../context.js';
import { printJson, printTable } from '../output.js';

export function registerTokenCommands(program: Command, { output, clientOf }: CliContext): void {
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
    .option(
      '--namespace <pattern...>',
      "limit the token to these namespaces: exact names or a prefix ending in '*' (default: every namespace)",
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
        "skillreg token create --name data-ci --scope publish --namespace data 'data-*'",
      ),
    )
    .action(
      async (
        options: {
          name: string;
          scope: ('read' | 'publish' | 'admin')[];
          namespace?: string[];
          expiresInDays?: number;
          json?: boolean;
        },
        command: Command,
      ) => {
        const created = await clientOf(command).createToken({
          name: options.name,
          scopes: options.scope,
          ...(options.namespace ? { namespaces: options.namespace } : {}),
          expiresInDays: options.expiresInDays,
        });
        if (options.json) {
          printJson(output, created);
          return;
        }
        const where = created.namespaces ? `; namespaces ${created.namespaces.join(', ')}` : '';
        output.info(
          `created token ${created.id} (${created.name}; scopes ${created.scopes.join(', ')}${where})`,
        );
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
      const tokens = await clientOf(command).listTokens();
      if (options.json) {
        printJson(output, tokens);
        return;
      }
      printTable(
        output,
        ['id', 'name', 'scopes', 'namespaces', 'prefix', 'created by', 'expires', 'last used'],
        tokens.map((item) => [
          item.id,
          item.name,
          item.scopes.join(','),
          item.namespaces?.join(',') ?? '*',
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
      await clientOf(command).revokeToken(id);
      output.info(`revoked token ${id}`);
    });
}
