import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import semver from 'semver';
import { prepareBundle } from '../bundle/prepare.js';
import type { BundleFile, BundleLimits } from '../bundle/types.js';
import { AppError } from '../errors.js';
import type { SkillsRepository } from '../storage/skills-repository.js';

const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** Reads a skill folder into bundle files, following no links (a seed is trusted but must stay in its folder). */
export async function readSkillFolder(root: string): Promise<BundleFile[]> {
  const files: BundleFile[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(full);
      } else if (entry.isFile()) {
        const stats = await lstat(full);
        files.push({
          path: path.relative(root, full).split(path.sep).join('/'),
          bytes: await readFile(full),
          mode: stats.mode & 0o111 ? 0o755 : 0o644,
        });
      }
    }
  }
  await walk(root);
  return files;
}

/**
 * Publishes every folder of the seed directory as actor "seed". Idempotent (identical content is a
 * no-op) and never overwrites: a skill that already has a version above the seed's is left alone.
 */
export async function loadSeeds(
  skills: SkillsRepository,
  seedDir: string,
  limits: BundleLimits,
  log: FastifyBaseLogger,
): Promise<void> {
  let entries: string[];
  try {
    entries = (await readdir(seedDir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (error) {
    log.warn({ err: error, seedDir }, 'seed folder not readable; no seeds loaded');
    return;
  }
  for (const entry of entries.sort()) {
    const folder = path.join(seedDir, entry);
    try {
      const prepared = prepareBundle(await readSkillFolder(folder), { limits });
      const seedVersion = prepared.skill.metadataVersion ?? '1.0.0';
      const existing = await skills.versions(prepared.skill.name).catch(() => []);
      const newer = existing.find((summary) => semver.gt(summary.version, seedVersion));
      if (newer) {
        log.debug(
          { skill: prepared.skill.name, newer: newer.version },
          'seed skipped: a newer version is published',
        );
        continue;
      }
      const result = await skills.publish({
        skill: prepared.skill,
        files: prepared.files,
        digest: prepared.digest,
        requestedVersion: seedVersion,
        actor: 'seed',
      });
      log.info({ skill: result.name, version: result.version, created: result.created }, 'seed loaded');
    } catch (error) {
      // A broken or conflicting seed must not stop the service from starting.
      const detail = error instanceof AppError || error instanceof Error ? error.message : String(error);
      log.warn({ seed: entry, detail }, 'seed not loaded');
    }
  }
}
