import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import {
  type Envelope,
  type Jwk,
  jwkOf,
  signStatement,
  statementOf,
  subjectName,
} from '../provenance/dsse.js';
import type { AttestedVersion, ProvenanceRepository } from '../storage/provenance-repository.js';

/**
 * Provenance: the registry signs every version it stores (an in-toto Statement v1 in a DSSE envelope,
 * Ed25519; src/provenance). The key is SKILLREG_SIGNING_KEY, else one generated once and kept in the
 * database, so every replica signs with the same key. Every key ever used stays in the JWKS.
 */

/** Versions signed per statement by the backfill. */
const BACKFILL_BATCH = 500;

export class SigningService {
  private constructor(
    private readonly repository: ProvenanceRepository,
    private readonly key: KeyObject,
    readonly kid: string,
    private readonly registryUrl: string,
  ) {}

  static async open(
    repository: ProvenanceRepository,
    options: { pem?: string; registryUrl: string },
  ): Promise<SigningService> {
    if (options.pem !== undefined) {
      const key = createPrivateKey(options.pem);
      const jwk = jwkOf(key);
      await repository.registerPublicKey(jwk.kid, jwk.x);
      return new SigningService(repository, key, jwk.kid, options.registryUrl);
    }
    const stored = await repository.generatedKey(() => {
      const { privateKey } = generateKeyPairSync('ed25519');
      const jwk = jwkOf(privateKey);
      return {
        kid: jwk.kid,
        publicKey: jwk.x,
        privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      };
    });
    return new SigningService(
      repository,
      createPrivateKey(stored.privateKey!),
      stored.kid,
      options.registryUrl,
    );
  }

  /** The envelope of a stored version: the one kept, or one signed now (and kept). */
  async envelopeOf(versionId: string): Promise<Envelope | undefined> {
    return (await this.repository.envelopeOf(versionId)) ?? this.attest(versionId);
  }

  /** Signs a stored version and keeps the envelope (a second signing of it keeps the first). */
  async attest(versionId: string): Promise<Envelope | undefined> {
    const version = await this.repository.attested(versionId);
    if (!version) return undefined;
    const envelope = this.sign(version);
    await this.repository.store([{ versionId, kid: this.kid, envelope }]);
    return (await this.repository.envelopeOf(versionId)) ?? envelope;
  }

  /** Signs a version just stored, from what its publish knows (no read back). */
  async attestStored(version: AttestedVersion): Promise<void> {
    await this.storeSigned([version]);
  }

  /** Signs versions and keeps their envelopes (a version signed before keeps its first). */
  private storeSigned(versions: readonly AttestedVersion[]): Promise<void> {
    return this.repository.store(
      versions.map((version) => ({ versionId: version.id, kid: this.kid, envelope: this.sign(version) })),
    );
  }

  /**
   * Signs every version stored without an envelope (with `changedAfter`, of the skills written after
   * that catalogue revision: see startup-checks.ts); answers how many.
   */
  async backfill(changedAfter?: number): Promise<number> {
    if (changedAfter !== undefined) {
      let signed = 0;
      for (;;) {
        const versions = await this.repository.unsignedOfSkillsChangedAfter(changedAfter, BACKFILL_BATCH);
        if (versions.length === 0) return signed;
        await this.storeSigned(versions);
        signed += versions.length;
      }
    }
    if (await this.repository.allSigned()) return 0;
    let signed = 0;
    let after: string | undefined;
    for (;;) {
      const { versions, last } = await this.repository.unsignedAfter(after, BACKFILL_BATCH);
      if (last === undefined) return signed;
      after = last;
      if (versions.length === 0) continue;
      await this.storeSigned(versions);
      signed += versions.length;
    }
  }

  /** Every key the registry signed with, as a JWKS. */
  async jwks(): Promise<{ keys: Jwk[] }> {
    const keys = await this.repository.keys();
    return {
      keys: keys.map((key) => ({
        kty: 'OKP',
        crv: 'Ed25519',
        x: key.publicKey,
        kid: key.kid,
        use: 'sig',
        alg: 'EdDSA',
      })),
    };
  }

  private sign(version: AttestedVersion): Envelope {
    const statement = statementOf(
      subjectName(version.namespace, version.name, version.version, DEFAULT_NAMESPACE),
      version.digest,
      {
        namespace: version.namespace,
        name: version.name,
        version: version.version,
        publisher: version.publisher ?? version.publishedBy,
        publishedAt: version.createdAt.toISOString(),
        scan: version.scan,
        registry: this.registryUrl,
      },
    );
    return signStatement(statement, this.key, this.kid);
  }
}
