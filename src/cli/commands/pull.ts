import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { readServedArchive } from '../../bundle/archive-read.js';
import { bundleDigest } from '../../bundle/digest.js';
import { installableFiles } from '../../bundle/installable-skill-md.js';
import { normalizeEntryPath } from '../../bundle/paths.js';
import { type CliContext, examples, namespaceOption, ReportedFailure, viewOption } from '../context.js';
import { DOWNLOAD_LIMITS } from '../local-skill.js';

export function registerPullCommand(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('pull')
    .description(
      "download a skill and write its folder, verifying the digest; SKILL.md gets the registry's name and description in its frontmatter where the registry filled them in (--as-published keeps it byte for byte)",
    )
    .argument('<name>', 'skill name')
    .argument('[dir]', 'target folder (default ./<name>)')
    .option('--version <version>', 'exact version')
    .option('--tag <tag>', 'dist-tag (default latest)')
    .option('--force', 'replace the target folder if it exists and is not empty')
    .option(
      '--as-published',
      'write every file exactly as published, even a SKILL.md whose name or description the registry filled in',
    )
    .addOption(namespaceOption('read from').conflicts('view'))
    .addOption(viewOption().conflicts('namespace'))
    .addHelpText(
      'after',
      `\nRefuses to write into a non-empty folder unless --force is given (which replaces it).\n${examples(
        'skillreg pull pdf-tools',
        'skillreg pull pdf-tools .claude/skills/pdf-tools --version 1.2.0',
        'skillreg pull pdf-tools --view data-agents',
      )}`,
    )
    .action(
      async (
        name: string,
        dir: string | undefined,
        options: { version?: string; tag?: string; force?: boolean; asPublished?: boolean },
        command: Command,
      ) => {
        const client = clientOf(command);
        const target = path.resolve(dir ?? name);
        const existing = await stat(target).catch(() => undefined);
        if (existing && !options.force) {
          const empty = existing.isDirectory() && (await readdir(target)).length === 0;
          if (!empty) {
            output.error(
              `${target} ${existing.isDirectory() ? 'exists and is not empty' : 'exists and is not a folder'}; pass --force to replace it`,
            );
            throw new ReportedFailure();
          }
        }
        const fetched = await client.getBundle(name, {
          version: options.version,
          tag: options.tag,
          contents: 'as-published',
        });
        const published = await readServedArchive(fetched.value, 'tar.gz', DOWNLOAD_LIMITS);
        const digest = bundleDigest(published);
        const version = fetched.headers.get('x-skill-version') ?? options.version;
        const detail = () => client.getSkill(name, version ? { version } : { tag: options.tag });
        const expected = fetched.headers.get('x-skill-digest') ?? (await detail()).value.digest;
        if (expected !== digest) {
          output.error(`digest mismatch: the registry announced ${expected} but the archive holds ${digest}`);
          throw new ReportedFailure();
        }
        // Completed here from the verified files, as the registry completes it for installers.
        let files = published;
        let completed = false;
        if (!options.asPublished) {
          const skill = (await detail()).value;
          ({ files, completed } = installableFiles(published, skill.name, skill.description));
        }
        // Write next to the target and move it into place, so a failure never leaves half a skill.
        const staging = `${target}.skillreg-${process.pid}-${Date.now()}`;
        try {
          for (const file of files) {
            const destination = path.join(staging, ...normalizeEntryPath(file.path).split('/'));
            await mkdir(path.dirname(destination), { recursive: true });
            await writeFile(destination, file.bytes, { mode: file.mode });
          }
          await mkdir(staging, { recursive: true });
          if (existing) await rm(target, { recursive: true, force: true });
          await mkdir(path.dirname(target), { recursive: true });
          await rename(staging, target);
        } finally {
          await rm(staging, { recursive: true, force: true });
        }
        output.info(`pulled ${name}@${version ?? '?'} (${files.length} files, ${digest}) into ${target}`);
        if (completed) {
          output.info(
            'SKILL.md was published without its name or description in the frontmatter: written with the ones the registry uses (--as-published keeps it as published)',
          );
        }
      },
    );
}
