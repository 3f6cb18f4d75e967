import type { Command } from 'commander';
import { type CliContext, examples, namespaceOption } from '../context.js';
import { printJson } from '../output.js';

/** `tag` and `yank`: the two writes on versions already published (scope publish). */
export function registerVersionCommands(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('tag')
    .description('point a dist-tag at a published version (moving it if it points elsewhere)')
    .argument('<name>', 'skill name')
    .argument('<tag>', 'dist-tag, e.g. stable or beta')
    .argument('<version>', 'the exact version the tag should point at')
    .option('--json', "print the registry's JSON answer")
    .addOption(namespaceOption('write in'))
    .addHelpText(
      'after',
      `\nReaders that ask for the tag (GET /skills/{name}?tag=, pull --tag) get the version from the next\nrequest on. Pointing latest at an older version is a rollback.\n${examples(
        'skillreg tag pdf-tools stable 1.2.0',
        'skillreg tag pdf-tools latest 1.1.0   # roll back',
      )}`,
    )
    .action(
      async (name: string, tag: string, version: string, options: { json?: boolean }, command: Command) => {
        const moved = await clientOf(command).setTag(name, tag, version);
        if (options.json) {
          printJson(output, moved);
          return;
        }
        const before =
          moved.previous === null
            ? ' (new tag)'
            : moved.previous === moved.version
              ? ' (already there)'
              : ` (was ${moved.previous})`;
        output.info(`${moved.name}: ${moved.tag} -> ${moved.version}${before}`);
      },
    );

  program
    .command('yank')
    .description(
      'withdraw a version: off the catalogue and latest, its dist-tags removed; still readable by exact version',
    )
    .argument('<name>', 'skill name')
    .argument('<version>', 'the exact version to yank')
    .option('--json', "print the registry's JSON answer")
    .addOption(namespaceOption('write in'))
    .addHelpText(
      'after',
      `\nPinned users keep working (the exact version stays readable). Prints what latest points at now.\nYanking a yanked version again changes nothing.\n${examples(
        'skillreg yank pdf-tools 1.2.1',
        'skillreg yank pdf-tools 1.2.1 --namespace data-platform',
      )}`,
    )
    .action(async (name: string, version: string, options: { json?: boolean }, command: Command) => {
      const yanked = await clientOf(command).yank(name, version);
      if (options.json) {
        printJson(output, yanked);
        return;
      }
      output.info(
        `${yanked.alreadyYanked ? 'already yanked' : 'yanked'} ${yanked.name}@${yanked.version}; latest is ${yanked.latest ?? 'none (every version is yanked)'}`,
      );
    });
}
