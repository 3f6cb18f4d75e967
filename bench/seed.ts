/**
 * Seeds N synthetic skills straight into the database in batched statements (publishing 100,000
 * skills through HTTP would take longer than the benchmark itself). Rows are exactly what a publish
 * stores: SKILL.md parsed and digested by the same prepareBundle as the server, one version per skill,
 * its blob and file row, and an automatic `latest` tag; the revision goes up once at the end.
 *
 * Token counts: the description entry is counted exactly (o200k); the body count is estimated as
 * characters / 4, which only feeds informational fields (counting 100,000 bodies would dominate the seed).
 */
import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { writeZip } from '../src/bundle/archive-write.js';
import { fileDigest } from '../src/bundle/digest.js';
import { prepareBundle } from '../src/bundle/prepare.js';
import { DEFAULT_LIMITS } from '../src/bundle/types.js';
import type { Database } from '../src/db/client.js';
import {
  blobs,
  distTags,
  namespaces,
  registryState,
  skills,
  skillVersions,
  versionArchives,
  versionFiles,
} from '../src/db/schema.js';
import { countCatalogueEntryTokens } from '../src/render/token-count.js';
import { encodeTerms, searchDocument } from '../src/search/document.js';
import { installedVersion } from '../src/services/installed-versions.js';
import { promptTokenColumns } from '../src/services/prompt-token-backfill.js';
import { archiveKey } from '../src/storage/records.js';

/** Words descriptions are drawn from; search terms in the benchmark come from here too. */
export const TOPICS = [
  'kubernetes',
  'terraform',
  'postgres',
  'react',
  'python',
  'rust',
  'golang',
  'docker',
  'graphql',
  'kafka',
  'redis',
  'spark',
  'pandas',
  'excel',
  'powerpoint',
  'pdf',
  'invoice',
  'contract',
  'security',
  'audit',
  'logging',
  'metrics',
  'tracing',
  'billing',
  'payments',
  'onboarding',
  'release',
  'changelog',
  'migration',
  'accessibility',
  'localization',
  'testing',
  'benchmark',
  'profiling',
  'caching',
  'search',
  'embedding',
  'prompt',
  'webhook',
  'oauth',
  'saml',
  'ldap',
  'backup',
  'restore',
  'incident',
  'runbook',
  'compliance',
  'gdpr',
  'hipaa',
  'figma',
  'slack',
  'jira',
  'github',
  'gitlab',
  'jenkins',
  'ansible',
  'helm',
  'istio',
  'nginx',
  'lambda',
  'bigquery',
  'snowflake',
  'dbt',
  'airflow',
  'tableau',
  'latex',
  'markdown',
  'diagram',
];
const VERBS = [
  'review',
  'write',
  'debug',
  'deploy',
  'design',
  'document',
  'refactor',
  'analyse',
  'monitor',
  'migrate',
];
const NOUNS = [
  'pipelines',
  'reports',
  'schemas',
  'dashboards',
  'queries',
  'configs',
  'clusters',
  'templates',
  'workflows',
  'APIs',
];

function pick<T>(list: readonly T[], n: number): T {
  return list[n % list.length]!;
}

const WORDS = [
  'check',
  'the',
  'input',
  'before',
  'changing',
  'anything',
  'and',
  'keep',
  'each',
  'step',
  'small',
  'explain',
  'why',
  'tests',
  'must',
  'pass',
  'read',
  'existing',
  'code',
  'first',
  'prefer',
  'clear',
  'names',
  'avoid',
  'surprises',
  'report',
  'what',
  'you',
  'ran',
  'when',
  'unsure',
  'ask',
  'document',
  'decisions',
  'use',
  'tools',
  'carefully',
  'review',
  'output',
  'against',
  'checklist',
  'handle',
  'errors',
  'log',
  'retry',
  'limits',
  'timeouts',
  'configuration',
  'defaults',
  'users',
  'expect',
  'stable',
  'behaviour',
  'version',
  'release',
];

/**
 * A body of about `bytes` characters of varied prose (a fixed pseudo-random sequence per skill), so it
 * compresses and is stored like real text: a typical 5 KB SKILL.md body is kept out of line by PostgreSQL.
 */
function syntheticBody(i: number, name: string, bytes: number): string {
  let state = (i * 2_654_435_761) >>> 0 || 1;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state >>> 8;
  };
  let body = `# ${name}\n\n`;
  let step = 1;
  while (body.length < bytes) {
    body += `## Step ${step++}\n\n`;
    const sentences = 3 + (next() % 4);
    for (let s = 0; s < sentences; s++) {
      const length = 8 + (next() % 10);
      const words = Array.from({ length }, () => WORDS[next() % WORDS.length]!);
      body += `${words.join(' ').replace(/^./, (c) => c.toUpperCase())}. `;
    }
    body += '\n\n';
  }
  return body;
}

/** Words for the second sentence of a description that no bench search asks for. */
const TRAITS = ['checklist', 'review', 'cleanup', 'hardening', 'upgrade', 'audit', 'tuning', 'rollout'];

/**
 * Deterministic skill i: a name, a description of about 300 characters (the average of the 248 real
 * skills in the shared corpus is 306) and a body of about `bodyBytes`. The second sentence repeats
 * only words of the first and TRAITS, so searches match the same skills as with the first alone.
 */
export function syntheticSkill(i: number, bodyBytes = 4_096): { name: string; text: string } {
  const a = pick(TOPICS, i);
  const b = pick(TOPICS, Math.floor(i / TOPICS.length) + 7);
  const verb = pick(VERBS, Math.floor(i / 3));
  const noun = pick(NOUNS, Math.floor(i / 7));
  const name = `${a}-${verb}-${i.toString(36)}`;
  const description = `Use when asked to ${verb} ${a} ${noun} or ${b} ${noun}; covers conventions, checks and common mistakes (variant ${i}). It reads the project layout first, confirms before anything destructive, and explains each change with the files touched and the commands run; phrases: "${verb} the ${a} ${noun}", "${a} ${noun} ${pick(TRAITS, i)}".`;
  const body = `${syntheticBody(i, name, bodyBytes - 200)}When you ${verb} ${a} ${noun}, check the ${b} integration and run the tests before finishing.\n`;
  const text = `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\nmetadata:\n  version: "1.0.0"\n---\n\n${body}`;
  return { name, text };
}

export interface SeedOptions {
  count: number;
  /** First index (seeding can be resumed or extended). */
  start?: number;
  batch?: number;
  bodyBytes?: number;
  /**
   * Also store each version's zip archives, as a publish does (as published, and the installable one,
   * here the same bytes). Without them the rows look like versions stored before archives were built
   * at publish, and the service builds them all in the background when it starts.
   */
  archives?: boolean;
  /** The namespace the skills go to (default `default`); made when missing. */
  namespace?: string;
  onProgress?: (done: number) => void;
}

const NEXT_REVISION = sql<number>`(select ${registryState.revision} + 1 from ${registryState} where ${registryState.id} = 1)`;

/** Inserts skills start..start+count-1; returns how many were inserted. */
export async function seedSkills(database: Database, options: SeedOptions): Promise<number> {
  const { db } = database;
  const start = options.start ?? 0;
  const batch = options.batch ?? 1_000;
  let inserted = 0;
  const namespace = options.namespace ?? 'default';
  await db.insert(namespaces).values({ name: namespace }).onConflictDoNothing();
  for (let offset = 0; offset < options.count; offset += batch) {
    const size = Math.min(batch, options.count - offset);
    const skillRows: (Omit<typeof skills.$inferInsert, 'changedRevision'> & {
      changedRevision: SQL<number>;
    })[] = [];
    const versionRows: (typeof skillVersions.$inferInsert)[] = [];
    const blobRows: (typeof blobs.$inferInsert)[] = [];
    const fileRows: (typeof versionFiles.$inferInsert)[] = [];
    const tagRows: (typeof distTags.$inferInsert)[] = [];
    const archiveRows: (typeof versionArchives.$inferInsert)[] = [];
    for (let k = 0; k < size; k++) {
      const { text } = syntheticSkill(start + offset + k, options.bodyBytes);
      const bytes = Buffer.from(text);
      const prepared = prepareBundle([{ path: 'SKILL.md', bytes, mode: 0o644 }], { limits: DEFAULT_LIMITS });
      const { skill } = prepared;
      const skillId = randomUUID();
      const versionId = randomUUID();
      const blobDigest = fileDigest(bytes);
      // The installed identity (computedHash, git tree and commit) as a publish stores it: without it
      // the service computes it for every seeded version in the background when it starts.
      const createdAt = new Date();
      const { computedHash, gitTree, gitCommit } = installedVersion(
        { name: skill.name, version: '1.0.0', description: skill.description, createdAt },
        [{ path: 'SKILL.md', bytes, mode: 0o644 }],
      );
      // Stamped with the revision the seed's last statement bumps to, as a publish stamps what it
      // writes: replicas' catalogue copies and the start-up checks read what changed by it.
      skillRows.push({ id: skillId, namespace, name: skill.name, changedRevision: NEXT_REVISION });
      versionRows.push({
        id: versionId,
        skillId,
        version: '1.0.0',
        digest: prepared.digest,
        name: skill.name,
        description: skill.description,
        frontmatter: skill.frontmatter,
        body: skill.body,
        skillMdSize: bytes.byteLength,
        totalSize: bytes.byteLength,
        fileCount: 1,
        tokensDescription: countCatalogueEntryTokens(skill.name, skill.description),
        tokensBody: Math.ceil(skill.body.length / 4),
        ...promptTokenColumns(skill.name, skill.description),
        searchTerms: encodeTerms(searchDocument(skill).terms),
        warnings: skill.warnings,
        publishedBy: 'bench-seed',
        createdAt,
        computedHash,
        gitTree,
        gitCommit,
      });
      blobRows.push({ digest: blobDigest, size: bytes.byteLength, content: bytes });
      fileRows.push({ versionId, path: 'SKILL.md', blobDigest, size: bytes.byteLength, mode: 0o644 });
      tagRows.push({ skillId, tag: 'latest', versionId, pinned: false });
      if (options.archives) {
        const zip = await writeZip([{ path: 'SKILL.md', bytes, mode: 0o644 }]);
        const zipDigest = fileDigest(zip);
        blobRows.push({ digest: zipDigest, size: zip.byteLength, content: zip });
        archiveRows.push({ versionId, format: archiveKey('zip', 'as-published'), blobDigest: zipDigest });
        // Its frontmatter has a name and a description, so the archive installers get is the same
        // bytes: linked as a publish links it, else the service would build 100,000 of them at start.
        archiveRows.push({ versionId, format: archiveKey('zip', 'installable'), blobDigest: zipDigest });
      }
    }
    await db.transaction(async (tx) => {
      await tx.insert(skills).values(skillRows).onConflictDoNothing();
      await tx.insert(skillVersions).values(versionRows);
      await tx.insert(blobs).values(blobRows).onConflictDoNothing();
      await tx.insert(versionFiles).values(fileRows);
      await tx.insert(distTags).values(tagRows);
      if (archiveRows.length > 0) await tx.insert(versionArchives).values(archiveRows);
    });
    inserted += size;
    options.onProgress?.(inserted);
  }
  await db.transaction(async (tx) => {
    await tx
      .update(registryState)
      .set({ revision: sql`${registryState.revision} + 1`, updatedAt: new Date() })
      .where(sql`${registryState.id} = 1`);
  });
  // VACUUM also empties the GIN indexes' pending lists, which every search would otherwise scan.
  await db.execute(sql`vacuum analyze`);
  return inserted;
}
