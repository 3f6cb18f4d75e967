import { eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { attestations, signingKeys, skills, skillVersions } from '../db/schema.js';
import type { OidcPublisher } from '../wire/types.js';

export interface StoredKey {
  kid: string;
  publicKey: string;
  privateKey: string | null;
  createdAt: Date;
}

export type StoredEnvelope = typeof attestations.$inferSelect.envelope;

/** What a version's statement says of it. */
export interface AttestedVersion {
  id: string;
  namespace: string;
  name: string;
  version: string;
  digest: string;
  publishedBy: string;
  /** The CI identity of a trusted publish (OIDC), which the predicate names instead of the token. */
  publisher: OidcPublisher | null;
  createdAt: Date;
  scan: { verdict: string; rules: string } | null;
}

const attestedColumns = {
  id: skillVersions.id,
  namespace: skills.namespace,
  name: skills.name,
  version: skillVersions.version,
  digest: skillVersions.digest,
  publishedBy: skillVersions.publishedBy,
  publisher: skillVersions.publisher,
  createdAt: skillVersions.createdAt,
  verdict: skillVersions.scanVerdict,
  rules: sql<string | null>`${skillVersions.scan} ->> 'rules'`,
};

function attestedOf(
  row: {
    verdict: string | null;
    rules: string | null;
  } & Omit<AttestedVersion, 'scan'>,
): AttestedVersion {
  const { verdict, rules, ...rest } = row;
  return { ...rest, scan: verdict === null ? null : { verdict, rules: rules ?? '' } };
}

/** Signing keys and the envelopes signed with them. */
export class ProvenanceRepository {
  constructor(private readonly db: Db) {}

  /** Every key the registry signed with or signs with, oldest first. */
  async keys(): Promise<StoredKey[]> {
    return this.db.select().from(signingKeys).orderBy(signingKeys.createdAt);
  }

  /**
   * The newest generated key, made with `generate` when there is none: under a lock, so replicas
   * starting together agree on one key.
   */
  async generatedKey(
    generate: () => { kid: string; publicKey: string; privateKey: string },
  ): Promise<StoredKey> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('skillreg:signing-key'))`);
      const [existing] = await tx
        .select()
        .from(signingKeys)
        .where(isNotNull(signingKeys.privateKey))
        .orderBy(sql`${signingKeys.createdAt} desc`)
        .limit(1);
      if (existing) return existing;
      const [created] = await tx.insert(signingKeys).values(generate()).returning();
      return created!;
    });
  }

  /** Lists a key given to the process (its public half) so the JWKS keeps it after a rotation. */
  async registerPublicKey(kid: string, publicKey: string): Promise<void> {
    await this.db.insert(signingKeys).values({ kid, publicKey, privateKey: null }).onConflictDoNothing();
  }

  async envelopeOf(versionId: string): Promise<StoredEnvelope | undefined> {
    const [row] = await this.db
      .select({ envelope: attestations.envelope })
      .from(attestations)
      .where(eq(attestations.versionId, versionId));
    return row?.envelope;
  }

  /** Keeps envelopes; a version that has one keeps the one it has. */
  async store(
    signed: readonly { versionId: string; kid: string; envelope: StoredEnvelope }[],
  ): Promise<void> {
    if (signed.length === 0) return;
    await this.db
      .insert(attestations)
      .values([...signed])
      .onConflictDoNothing();
  }

  async attested(versionId: string): Promise<AttestedVersion | undefined> {
    const [row] = await this.db
      .select(attestedColumns)
      .from(skillVersions)
      .innerJoin(skills, eq(skills.id, skillVersions.skillId))
      .where(eq(skillVersions.id, versionId));
    return row ? attestedOf(row) : undefined;
  }

  /** Versions without an envelope (stored before signing existed), `limit` at a time. */
  async unsigned(limit: number): Promise<AttestedVersion[]> {
    const rows = await this.db
      .select(attestedColumns)
      .from(skillVersions)
      .innerJoin(skills, eq(skills.id, skillVersions.skillId))
      .leftJoin(attestations, eq(attestations.versionId, skillVersions.id))
      .where(isNull(attestations.versionId))
      .orderBy(skillVersions.id)
      .limit(limit);
    return rows.map(attestedOf);
  }
}
