import { type Command, InvalidArgumentError } from 'commander';
import type { CatalogueItem, CataloguePage } from '../../client/index.js';
import { type CliContext, examples, namespaceOption, viewOption } from '../context.js';
import { clip, printJson, printTable } from '../output.js';

/** The registry's largest page of GET /skills. */
const MAX_PAGE = 500;
const DEFAULT_LIST_LIMIT = 50;

function positiveWholeNumber(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return number;
}

function catalogueRows(items: CatalogueItem[], inView: boolean): { headers: string[]; rows: string[][] } {
  const headers = ['name', 'version', 'tags', ...(inView ? ['namespace'] : []), 'scan', 'description'];
  const rows = items.map((item) => [
    item.name,
    item.version,
    item.tags.join(','),
    ...(inView ? [item.namespace ?? '-'] : []),
    item.scan?.verdict ?? '-',
    clip(item.description),
  ]);
  return { headers, rows };
}

export function registerCatalogueCommands(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('list')
    .description('list the catalogue: every skill with its version, dist-tags and description')
    .option('--tag <tag>', 'the versions a dist-tag points at (default latest)')
    .option(
      '--limit <n>',
      `at most this many skills (default ${DEFAULT_LIST_LIMIT}); with --all, the size of each page`,
      positiveWholeNumber,
    )
    .option('--all', `every skill, following the registry's pages (of ${MAX_PAGE} unless --limit)`)
    .option('--json', "print the registry's JSON ({items, nextCursor}) instead of a table")
    .addOption(namespaceOption('read from').conflicts('view'))
    .addOption(viewOption().conflicts('namespace'))
    .addHelpText(
      'after',
      `\nSorted by name. When more skills exist than were listed, says so on stderr (and --json keeps the\nnextCursor to page on with GET /skills?cursor=).\n${examples(
        'skillreg list',
        'skillreg list --all --json | jq -r .items[].name',
        'skillreg list --tag stable --namespace data-platform',
        'skillreg list --view data-agents',
      )}`,
    )
    .action(
      async (options: { tag?: string; limit?: number; all?: boolean; json?: boolean }, command: Command) => {
        const client = clientOf(command);
        const { view } = command.optsWithGlobals<{ view?: string }>();
        const wanted = options.all ? Number.POSITIVE_INFINITY : (options.limit ?? DEFAULT_LIST_LIMIT);
        const pageSize = Math.min(MAX_PAGE, options.all ? (options.limit ?? MAX_PAGE) : wanted);
        const items: CatalogueItem[] = [];
        let cursor: string | undefined;
        do {
          const limit = Math.min(pageSize, wanted - items.length);
          const page: CataloguePage = (await client.listSkills({ tag: options.tag, limit, cursor })).value;
          items.push(...page.items);
          cursor = page.nextCursor ?? undefined;
        } while (cursor && items.length < wanted);
        if (options.json) {
          printJson(output, { items, nextCursor: cursor ?? null });
          return;
        }
        if (items.length === 0) {
          output.error(`no skills${options.tag ? ` with dist-tag '${options.tag}'` : ''} in this registry`);
          return;
        }
        const { headers, rows } = catalogueRows(items, view !== undefined);
        printTable(output, headers, rows);
        if (cursor) {
          output.error(
            `${items.length} skills listed; there are more: pass --all, or --limit with a larger number`,
          );
        }
      },
    );

  program
    .command('search')
    .description('find skills for a task in plain words, best first, with why each matched')
    .argument('<words...>', 'the task, e.g. turn csv files into a slide deck (typos tolerated)')
    .option('--limit <n>', 'at most this many results (default 10, at most 50)', positiveWholeNumber)
    .option('--tag <tag>', 'search the versions a dist-tag points at (default latest)')
    .option('--json', "print the registry's JSON ({query, results}) instead of a summary")
    .addOption(namespaceOption('read from').conflicts('view'))
    .addOption(viewOption().conflicts('namespace'))
    .addHelpText(
      'after',
      `\nThe same ranking agents get from the search_skills tool (GET /search). No match prints nothing on\nstdout and says so on stderr (exit 0).\n${examples(
        'skillreg search extract tables from pdf',
        'skillreg search "review a pull request" --limit 3 --json',
        'skillreg search deploy --view data-agents',
      )}`,
    )
    .action(
      async (
        words: string[],
        options: { limit?: number; tag?: string; json?: boolean },
        command: Command,
      ) => {
        const answer = (
          await clientOf(command).search(words.join(' '), { limit: options.limit, tag: options.tag })
        ).value;
        if (options.json) {
          printJson(output, answer);
          return;
        }
        if (answer.results.length === 0) {
          output.error(`no skill matches '${answer.query}'`);
          return;
        }
        answer.results.forEach((result, index) => {
          const where = result.namespace ? `  (${result.namespace})` : '';
          output.info(`${index + 1}. ${result.name}@${result.version}${where}  ${clip(result.description)}`);
          output.info(`   why: ${result.why}`);
        });
      },
    );
}
