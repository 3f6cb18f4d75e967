import { type Command, Option } from 'commander';
import type { SkillDetail } from '../../client/index.js';
import { type CliContext, examples, namespaceOption, viewOption } from '../context.js';
import { type Output, printJson, printTable } from '../output.js';

function printDetail(output: Output, skill: SkillDetail): void {
  const where = [
    skill.namespace ? `namespace ${skill.namespace}` : undefined,
    skill.resolvedFrom ? `resolved from ${skill.resolvedFrom}` : undefined,
    skill.shadows?.length
      ? `hides ${skill.shadows.map((shadow) => `${shadow.namespace}@${shadow.version}`).join(', ')}`
      : undefined,
  ].filter(Boolean);
  output.info(`${skill.name}@${skill.version}${where.length > 0 ? `  (${where.join('; ')})` : ''}`);
  output.info(`  ${skill.description}`);
  output.info('');
  const facts: [string, string][] = [
    ['digest', skill.digest],
    ['published', `${skill.createdAt}${skill.yanked ? '  (yanked)' : ''}`],
    [
      'size',
      `${skill.size} bytes in ${skill.files.length} file${skill.files.length === 1 ? '' : 's'}; tokens: description ${skill.tokens.description}, body ${skill.tokens.body}`,
    ],
    [
      'dist-tags',
      Object.entries(skill.distTags)
        .map(([tag, version]) => `${tag} -> ${version}`)
        .join(', ') || '-',
    ],
    [
      'scan',
      skill.scan
        ? `${skill.scan.verdict} (rules ${skill.scan.rules}, ${skill.scan.findings.length} finding${skill.scan.findings.length === 1 ? '' : 's'})`
        : 'not scanned (published before scanning)',
    ],
  ];
  for (const [label, value] of facts) output.info(`${label.padEnd(10)} ${value}`);
  for (const finding of skill.scan?.findings ?? []) {
    output.info(
      `  ${finding.severity.padEnd(8)}  ${finding.path}${finding.line > 0 ? `:${finding.line}` : ''}  ${finding.rule}: ${finding.detail}`,
    );
  }
  output.info('');
  printTable(
    output,
    ['version', 'published', 'tags', 'yanked', 'digest'],
    skill.versions.map((version) => [
      version.version,
      version.createdAt,
      version.tags.join(',') || '-',
      version.yanked ? 'yanked' : '',
      version.digest,
    ]),
  );
  output.info('');
  printTable(
    output,
    ['file', 'bytes', 'digest'],
    skill.files.map((file) => [file.path, String(file.size), file.digest]),
  );
}

export function registerInfoCommand(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('info')
    .description("one skill: its versions, dist-tags, files and the security scan's verdict")
    .argument('<name>', 'skill name')
    .addOption(
      new Option('--version <version>', 'this exact version (default: what the tag points at)').conflicts(
        'tag',
      ),
    )
    .option('--tag <tag>', 'the version this dist-tag points at (default latest)')
    .addOption(namespaceOption('read from').conflicts('view'))
    .addOption(viewOption().conflicts('namespace'))
    .option('--json', "print the registry's JSON (GET /skills/{name}) instead of a summary")
    .addHelpText(
      'after',
      examples(
        'skillreg info pdf-tools',
        'skillreg info pdf-tools --version 1.2.0 --json',
        'skillreg info pdf-tools --view data-agents',
      ),
    )
    .action(
      async (name: string, options: { version?: string; tag?: string; json?: boolean }, command: Command) => {
        const selector = options.version ? { version: options.version } : { tag: options.tag };
        const skill = (await clientOf(command).getSkill(name, selector)).value;
        if (options.json) printJson(output, skill);
        else printDetail(output, skill);
      },
    );
}
