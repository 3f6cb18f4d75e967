import { type ArchiveKind, readArchive, sniffArchiveKind } from '../bundle/archive-read.js';
import { prepareBundle } from '../bundle/prepare.js';
import { BundleError, type BundleFile, type BundleLimits } from '../bundle/types.js';
import type { PublishResult, SkillsRepository } from '../storage/skills-repository.js';

/** What arrived in a publish request, before any interpretation. */
export type Upload =
  | { kind: 'archive'; bytes: Uint8Array; declared?: ArchiveKind }
  | { kind: 'files'; files: BundleFile[] }
  | { kind: 'markdown'; bytes: Uint8Array };

export interface PublishOptions {
  nameOverride?: string;
  version?: string;
  tag?: string;
  actor: string;
  limits: BundleLimits;
}

/** Turns an upload into files; archives are recognised by their bytes, whatever the declared type. */
export async function filesOfUpload(upload: Upload, limits: BundleLimits): Promise<BundleFile[]> {
  switch (upload.kind) {
    case 'files':
      return upload.files;
    case 'markdown':
      return [{ path: 'SKILL.md', bytes: upload.bytes, mode: 0o644 }];
    case 'archive': {
      const kind = sniffArchiveKind(upload.bytes);
      if (!kind) {
        const expected = upload.declared ? `a ${upload.declared} archive` : 'a tar.gz or zip archive';
        throw new BundleError(400, 'Bad Request', `the request body is not ${expected}`, [
          {
            path: '(body)',
            detail: `the request body is not ${expected}: its first bytes match no known archive format. Send the archive file itself (curl --data-binary @bundle.tar.gz)`,
          },
        ]);
      }
      return readArchive(upload.bytes, kind, limits);
    }
  }
}

export async function publishUpload(
  skills: SkillsRepository,
  upload: Upload,
  options: PublishOptions,
): Promise<PublishResult> {
  const files = await filesOfUpload(upload, options.limits);
  const prepared = prepareBundle(files, { nameOverride: options.nameOverride, limits: options.limits });
  return skills.publish({
    skill: prepared.skill,
    files: prepared.files,
    digest: prepared.digest,
    requestedVersion: options.version,
    tag: options.tag,
    actor: options.actor,
  });
}
