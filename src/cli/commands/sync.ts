import path from 'node:path';
import type { Command } from 'commander';
import { BundleError, type BundleIssue } from '../../bundle/types.js';
import { chooseVersion, sortVersionsDescending } from '../../bundle/version.js';
import {
  RegistryError,
  type RetryEvent,
  type SkillRegistryClient,
  type VersionSummary,
} from '../../client/index.js';
import { findSkillFolders } from '../../services/skill-folder.js';
import {
  type CliContext,
  describeRetry,
  examples,
  explain,
  type GlobalOptions,
  namespaceOption,
  networkCause,
  ReportedFailure,
} from '../context.js';
import { archiveOf, describeDuplicate, duplicateNames, prepareFolder } from '../local-skill.js';
import { oidcOptions, publishingClient } from '../oidc.js';
import { createProgress, printTable, printWarnings } from '../output.js';

/** One line saying why a skill was refused, for the sync summary. */
function reasonOf(error: unknown): string {
  if (error instanceof RegistryError) {
    return `${error.status}: ${error.problem.errors?.[0]?.detail ?? error.problem.detail}`;
  }
  if (error instanceof BundleError) return error.errors[0]?.detail ?? error.message;
  const cause = networkCause(error);
  if (cause) return `cannot reach the registry (${cause})`;
  return error instanceof Error ? error.message : String(error);
}

interface PlannedPublish {
  status: 'would publish' | 'unchanged' | 'refused';
  version: string;
  reason?: string;
}

/**
 * The digests of the live versions of every skill already in the namespace, by name: one request.
 * A folder whose digest is among its skill's is unchanged, and is not sent at all. Undefined when the
 * registry cannot say (one that predates namespaces): every folder is then published, as before.
 */
async function publishedDigests(
  client: SkillRegistryClient,
): Promise<Map<string, Map<string, string>> | undefined> {
  try {
    const { skills } = (await client.namespaceDigests()).value;
    // Digest to version; where one digest was published under several versions, the highest.
    return new Map(
      skills.map((skill) => [
        skill.name,
        new Map(
          sortVersionsDescending(skill.versions.map((entry) => entry.version))
            .reverse()
            .map((version) => [skill.versions.find((entry) => entry.version === version)!.digest, version]),
        ),
      ]),
    );
  } catch (error) {
    if (error instanceof RegistryError && error.status === 404) {
      // A namespace nothing was published into yet holds nothing; an older registry has no such route.
      return error.problem.detail?.includes('no namespace') ? new Map() : undefined;
    }
    throw error;
  }
}

interface DeclaredSkill {
  name: string;
  metadataVersion?: string;
  digest: string;
}

/** A folder of the tree as read before anything is sent: what it declares, or why it cannot be published. */
interface CheckedFolder {
  folder: string;
  /** Relative to the root, as the summary shows it. */
  label: string;
  /** What it declares. Not its files: those are read again for the folders sent, so a tree is never all in memory. */
  skill?: DeclaredSkill;
  warnings: BundleIssue[];
  error?: unknown;
}

async function checkFolder(root: string, folder: string): Promise<CheckedFolder> {
  const label = path.relative(root, folder) || '.';
  try {
    const prepared = await prepareFolder(folder);
    const { name, metadataVersion, warnings } = prepared.skill;
    return { folder, label, skill: { name, metadataVersion, digest: prepared.digest }, warnings };
  } catch (error) {
    return { folder, label, warnings: error instanceof BundleError ? error.warnings : [], error };
  }
}

/** What a publish would do, decided with the server's own version rules (src/bundle/version.ts). */
async function dryRunStatus(client: SkillRegistryClient, skill: DeclaredSkill): Promise<PlannedPublish> {
  let versions: VersionSummary[];
  try {
    versions = (await client.listVersions(skill.name)).value;
  } catch (error) {
    if (!(error instanceof RegistryError && error.status === 404)) throw error;
    versions = [];
  }
  const identical = versions.filter((summary) => summary.digest === skill.digest);
  const live = identical.filter((summary) => !summary.yanked);
  const same = (live.length > 0 ? live : identical)[0];
  if (same) return { status: 'unchanged', version: same.version };
  const choice = chooseVersion({
    metadataVersion: skill.metadataVersion,
    existing: versions.map((summary) => summary.version),
  });
  if (versions.some((summary) => summary.version === choice.version)) {
    return {
      status: 'refused',
      version: choice.version,
      reason: `409: version ${choice.version} already exists with different content; bump metadata.version`,
    };
  }
  return { status: 'would publish', version: choice.version };
}

export function registerSyncCommand(program: Command, context: CliContext): void {
  const { output } = context;
  const command = program
    .command('sync')
    .description('find every SKILL.md below <root>, validate and publish each; safe to run on every push')
    .argument('<root>', 'repository root')
    .option('--dry-run', 'show what would change without publishing anything')
    .option('--tag <tag>', 'point this dist-tag at every published version')
    .addOption(namespaceOption('publish into'));
  for (const option of oidcOptions()) command.addOption(option);
  command
    .addHelpText(
      'after',
      [
        '',
        'Searches every folder below <root> (including .claude/skills, .agents/skills and skills/; never',
        '.git or node_modules); a folder holding SKILL.md is one skill. Every valid skill is published even',
        'when others are refused; identical content is reported as unchanged and creates no version.',
        "The registry's digests are read first (one request per namespace): a folder whose content is",
        'already published as a live version is not sent at all, so an unchanged repository of thousands of',
        'skills syncs in seconds and spends no write quota (with --tag every skill is sent, to move the tag).',
        'Every folder is read before anything is sent: a tree in which two folders declare the same',
        'skill name is refused whole (both folders named, nothing published). A folder is sent under its',
        "own name, so a SKILL.md without a name takes the folder's, as with 'tar -C parent folder'.",
        'Prints a progress bar on a terminal and plain lines in CI, then a summary table; the',
        "registry's warnings for each skill, and waits before retries, go to stderr.",
        'Exit code 1 if any skill was refused (each with its reason) or the token was rejected.',
        examples(
          'skillreg sync .',
          'skillreg sync . --dry-run',
          'skillreg sync . --tag stable',
          'skillreg sync ./teams/data --namespace data-platform',
          'skillreg sync . --namespace data-platform --oidc   # GitHub Actions, trusted publishing',
        ),
      ].join('\n'),
    )
    .action(async (root: string, options: { dryRun?: boolean; tag?: string }, command: Command) => {
      const { url } = command.optsWithGlobals<GlobalOptions>();
      const folders = await findSkillFolders(root);
      if (folders.length === 0) {
        output.error(`no SKILL.md found in ${root} or below it`);
        throw new ReportedFailure();
      }
      // Every folder is read and checked before any request: one name declared by two folders would
      // have one overwrite the other, so such a tree is refused whole and nothing is published.
      const checked: CheckedFolder[] = [];
      for (const folder of folders) checked.push(await checkFolder(root, folder));
      const duplicates = duplicateNames(
        checked.flatMap(({ skill, label }) => (skill ? [{ name: skill.name, folder: label }] : [])),
      );
      if (duplicates.length > 0) {
        for (const duplicate of duplicates) output.error(`sync refused: ${describeDuplicate(duplicate)}`);
        output.error('nothing was published: give every skill of the tree its own name, then sync again');
        throw new ReportedFailure();
      }

      const headers = ['status', 'name', 'version', 'folder', 'reason'];
      const rows: string[][] = [];
      /** Per folder, the warnings to show once the progress is done: the server's for what it received. */
      const warningsOf = new Map(checked.map(({ label, warnings }) => [label, warnings]));
      const progress = createProgress(output, folders.length);
      // A wait before a retry shows in the progress (on stderr: a line in CI, the bar's label on a terminal).
      const onRetry = (event: RetryEvent) => progress.note(`waiting: ${describeRetry(event)}`);
      let client: SkillRegistryClient;
      let scanBlocked = 0;
      let scanWarned = 0;
      let digests: Map<string, Map<string, string>> | undefined;
      try {
        client = await publishingClient(command, context, onRetry);
        digests = options.tag ? undefined : await publishedDigests(client);
      } catch (error) {
        progress.stop();
        if (error instanceof ReportedFailure) throw error;
        explain(output, error, 'sync stopped', url);
        throw new ReportedFailure();
      }
      const finish = () => {
        progress.stop();
        printTable(output, headers, rows);
        for (const [, , , label] of rows) printWarnings(output, warningsOf.get(label!) ?? [], label);
      };
      for (const { folder, label, skill, error: unreadable } of checked) {
        progress.update(label);
        let name = skill?.name;
        try {
          if (!skill) throw unreadable;
          const published = digests?.get(skill.name)?.get(skill.digest);
          if (published !== undefined) {
            rows.push(['unchanged', skill.name, published, label, '']);
            continue;
          }
          if (options.dryRun) {
            const planned = await dryRunStatus(client, skill);
            rows.push([planned.status, skill.name, planned.version, label, planned.reason ?? '']);
            continue;
          }
          const prepared = await prepareFolder(folder);
          name = prepared.skill.name;
          const result = await client.publish(
            { type: 'tar.gz', bytes: await archiveOf(prepared) },
            { tag: options.tag },
          );
          warningsOf.set(label, result.warnings);
          const flagged = result.scan?.verdict === 'warn';
          if (flagged) scanWarned += 1;
          rows.push([
            result.created ? 'published' : 'unchanged',
            result.name,
            result.version,
            label,
            flagged
              ? `scan warning: ${result.scan.findings.find((finding) => finding.severity === 'medium')?.rule ?? ''}`
              : '',
          ]);
        } catch (error) {
          if (error instanceof RegistryError && error.status === 422 && error.problem.scan) scanBlocked += 1;
          rows.push(['refused', name ?? '-', '-', label, reasonOf(error)]);
          // 429 and 503 get here only once the retries are spent: the next skills would wait as long.
          const fatal =
            (error instanceof RegistryError && [401, 403, 429, 503].includes(error.status)) ||
            networkCause(error) !== undefined;
          if (fatal) {
            // Every other skill would fail the same way: stop and say why.
            finish();
            explain(output, error, 'sync stopped', url);
            throw new ReportedFailure();
          }
        }
      }
      finish();
      const count = (status: string) => rows.filter((row) => row[0] === status).length;
      const refused = count('refused');
      const warnings = rows.reduce((sum, row) => sum + (warningsOf.get(row[3]!)?.length ?? 0), 0);
      const warned = warnings > 0 ? `; ${warnings} warning${warnings === 1 ? '' : 's'} (on stderr)` : '';
      output.info(
        options.dryRun
          ? `dry run: ${count('would publish')} would publish, ${count('unchanged')} unchanged, ${refused} refused; nothing was published${warned}`
          : `${count('published')} published, ${count('unchanged')} unchanged, ${refused} refused${warned}`,
      );
      if (scanBlocked + scanWarned > 0) {
        output.info(
          `security scan: ${scanBlocked} refused (quarantined), ${scanWarned} published with warnings`,
        );
      }
      if (refused > 0) throw new ReportedFailure();
    });
}
