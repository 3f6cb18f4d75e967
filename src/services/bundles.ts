import type { Scope } from '../domain/scope.js';
import { bufferBody } from '../render/response-bodies.js';
import {
  type ArchiveContents,
  type ArchiveFormat,
  archiveKey,
  type VersionRecord,
} from '../storage/records.js';
import type { Answer } from './answers.js';
import type { ArchiveService } from './archives.js';
import { type SkillReadService, selectorOf } from './skill-reads.js';

/**
 * Whole versions as archives: GET /skills/{name}/bundle and the discovery index's links. Installers
 * and hosts get SKILL.md with its frontmatter completed where the registry filled it in; the files as
 * published (what the version's digest and signature cover) are one query parameter away.
 */
export class BundleService {
  constructor(
    private readonly reads: SkillReadService,
    private readonly archives: ArchiveService,
  ) {}

  /** A version's archive, built once and stored (see ArchiveService). */
  async archive(
    record: VersionRecord,
    format: ArchiveFormat,
    contents: ArchiveContents,
  ): Promise<{ bytes: Buffer; sha256: string }> {
    const read = await this.reads.cached.of({
      read: 'archive',
      on: { kind: 'version', id: record.id, digest: record.digest },
      shape: [archiveKey(format, contents)],
    });
    return read.value(async () => {
      const stored = await this.archives.archive(record, format, contents);
      const { value } = bufferBody(stored.bytes);
      return { value: { bytes: value, sha256: stored.sha256 }, bytes: value.byteLength + 200 };
    });
  }

  /** GET /skills/{name}/bundle. */
  async bundleAnswer(
    scope: Scope,
    name: string,
    query: { version?: string; tag?: string },
    format: ArchiveFormat,
    contents: ArchiveContents,
  ): Promise<Answer> {
    const resolved = await this.reads.resolve(scope, name, selectorOf(query));
    const { record } = resolved;
    const read = await this.reads.cached.of({
      read: 'bundle',
      on: { kind: 'version', id: record.id, digest: record.digest },
      shape: [archiveKey(format, contents)],
      through: { scope, resolved },
    });
    return read.answer({
      contentType: format === 'zip' ? 'application/zip' : 'application/gzip',
      onBody: () => this.reads.recordUse(resolved, 'downloads'),
      // The headers name the archive's own hash, known once it is built.
      body: async () => {
        const archive = await this.archive(record, format, contents);
        return {
          payload: archive.bytes,
          headers: {
            'content-disposition': `attachment; filename="${record.name}-${record.version}.${format === 'zip' ? 'zip' : 'tar.gz'}"`,
            'x-skill-version': record.version,
            // The version's digest, over the files as published, whichever contents are served.
            'x-skill-digest': record.digest,
            'x-skill-contents': contents,
            'repr-digest': `sha-256=:${Buffer.from(archive.sha256, 'hex').toString('base64')}:`,
          },
        };
      },
    });
  }
}
