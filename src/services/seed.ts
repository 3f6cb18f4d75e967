import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import semver from 'semver';
import { prepareBundle } from '../bundle/prepare.js';
import type { BundleLimits } from '../bundle/types.js';
import { chooseVersion } from '../bundle/version.js';
import { AppError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import { readSkillFolder } from './skill-folder.js';
import type { SkillReadService } from './skill-reads.js';
import type { SkillWriteService } from './skill-writes.js';

/** Kept for callers that read folders through the seed module. */
export { readSkillFolder };

/**
 * Publishes every folder of the seed directory as actor "seed". Idempotent (identical content is a
 * no-op) and never overwrites: a skill that already has a version above the seed's is left alone.
 */
export async function loadSeeds(
  services: { reads: SkillReadService; writes: SkillWriteService },
  seedDir: string,
  limits: BundleLimits,
  log: FastifyBaseLogger,
  namespace: string = DEFAULT_NAMESPACE,
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
      // The same version rules as a publish (e.g. "1.0" reads as 1.0.0), so the comparison below cannot throw.
      const seedVersion = chooseVersion({
        metadataVersion: prepared.skill.metadataVersion ?? '1.0.0',
        existing: [],
      }).version;
      const existing = await services.reads
        .versions({ kind: 'namespace', namespace }, prepared.skill.name)
        .catch(() => []);
      const newer = existing.find((summary) => semver.gt(summary.version, seedVersion));
      if (newer) {
        log.debug(
          { skill: prepared.skill.name, newer: newer.version },
          'seed skipped: a newer version is published',
        );
        continue;
      }
      const result = await services.writes.publish({
        skill: prepared.skill,
        files: prepared.files,
        digest: prepared.digest,
        requestedVersion: seedVersion,
        actor: 'seed',
        namespace,
      });
      log.info(
        { namespace, skill: result.name, version: result.version, created: result.created },
        'seed loaded',
      );
    } catch (error) {
      // A broken or conflicting seed must not stop the service from starting.
      const detail = error instanceof AppError || error instanceof Error ? error.message : String(error);
      log.warn({ seed: entry, detail }, 'seed not loaded');
    }
  }
}
