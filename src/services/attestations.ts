import { NotFoundError } from '../domain/app-errors.js';
import type { Scope } from '../domain/scope.js';
import type { VersionSelector } from '../storage/records.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import type { SigningService } from './signing.js';
import type { SkillReadService } from './skill-reads.js';

/**
 * GET /skills/{name}/attestation: the DSSE envelope of the version the selector resolves to, through
 * the one resolution every face uses (so a quarantined version has none to show either).
 */
export class AttestationService {
  constructor(
    private readonly reads: SkillReadService,
    private readonly signing: SigningService,
  ) {}

  async answer(scope: Scope, name: string, selector: VersionSelector): Promise<Answer> {
    const resolved = await this.reads.resolve(scope, name, selector);
    const { record } = resolved;
    // An envelope never changes once kept: its ETag is the version's.
    const read = await this.reads.cached.of({
      read: 'attestation',
      on: { kind: 'version', id: record.id, digest: record.digest },
      shape: ['attestation'],
      through: { scope, resolved },
    });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      body: async () => {
        const envelope = await this.signing.envelopeOf(record.id);
        if (!envelope) throw new NotFoundError(`version ${record.version} of '${name}' is no longer stored`);
        return {
          payload: JSON.stringify(envelope),
          headers: { 'x-skill-version': record.version, 'x-skill-digest': record.digest },
        };
      },
    });
  }
}
