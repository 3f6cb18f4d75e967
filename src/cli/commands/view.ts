import type { Command } from 'commander';
import type { View } from '../../client/index.js';
import { type CliContext, examples } from '../context.js';
import { type Output, printJson, printTable } from '../output.js';

/** Layers as the precedence reads: the last one wins. */
function layersOf(view: View): string {
  return view.layers.join(' < ');
}

function printView(output: Output, view: View): void {
  output.info(`view ${view.name}: ${layersOf(view)}`);
  if (view.description) output.info(`  ${view.description}`);
  output.info(`  created ${view.createdAt}, updated ${view.updatedAt}`);
}

export function registerViewCommands(program: Command, { output, clientOf }: CliContext): void {
  const view = program
    .command('view')
    .description('list, show, create or replace, and delete views (ordered overlays of namespaces)')
    .addHelpText(
      'after',
      `\nA view serves, for each skill name, the version of the last (highest) layer that has one; read\nthrough it with --view on list, search, info and pull. Changing views needs an admin token.\n${examples(
        'skillreg view list',
        'skillreg view get data-agents',
        'skillreg view put data-agents default acme acme-data --description "what data agents load"',
        'skillreg view delete data-agents',
      )}`,
    );

  view
    .command('list')
    .description('every view with its layers')
    .option('--json', "print the registry's JSON")
    .addHelpText('after', examples('skillreg view list', 'skillreg view list --json'))
    .action(async (options: { json?: boolean }, command: Command) => {
      const { items } = (await clientOf(command).listViews()).value;
      if (options.json) {
        printJson(output, { items });
        return;
      }
      if (items.length === 0) {
        output.error("no views yet: create one with 'skillreg view put <view> <layers...>'");
        return;
      }
      printTable(
        output,
        ['view', 'layers (lowest first)', 'description'],
        items.map((item) => [item.name, layersOf(item), item.description ?? '']),
      );
    });

  view
    .command('get')
    .description("one view's layers and description")
    .argument('<view>', 'view name')
    .option('--json', "print the registry's JSON")
    .addHelpText('after', examples('skillreg view get data-agents'))
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const found = (await clientOf(command).getView(name)).value;
      if (options.json) printJson(output, found);
      else printView(output, found);
    });

  view
    .command('put')
    .description('create or replace a view (admin)')
    .argument('<view>', 'view name (skill-name rules)')
    .argument('<layers...>', 'namespaces, lowest precedence first; each must exist')
    .option('--description <text>', 'what the view is for')
    .option('--json', "print the registry's JSON")
    .addHelpText(
      'after',
      `\nReplaces the whole view: its layers and its description (omitted: none).\n${examples(
        'skillreg view put data-agents default acme acme-data',
      )}`,
    )
    .action(
      async (
        name: string,
        layers: string[],
        options: { description?: string; json?: boolean },
        command: Command,
      ) => {
        const { view: saved, created } = await clientOf(command).putView(name, {
          layers,
          ...(options.description !== undefined ? { description: options.description } : {}),
        });
        if (options.json) {
          printJson(output, saved);
          return;
        }
        output.info(`${created ? 'created' : 'replaced'} view ${saved.name}: ${layersOf(saved)}`);
      },
    );

  view
    .command('delete')
    .description('delete a view (admin); the namespaces it overlaid are untouched')
    .argument('<view>', 'view name')
    .addHelpText('after', examples('skillreg view delete data-agents'))
    .action(async (name: string, _options: unknown, command: Command) => {
      await clientOf(command).deleteView(name);
      output.info(`deleted view ${name}`);
    });
}
