import { and, eq, gt, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
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

  /**
   * Whether every version has its envelope: as many envelopes as versions (an envelope belongs to
   * one version and goes with it), two counts over primary keys rather than a search for the missing.
   */
  async allSigned(): Promise<boolean> {
    const result = await this.db.execute(sql`
      select (select count(*) from ${skillVersions}) = (select count(*) from ${attestations}) as all_signed`);
    return (result as unknown as { rows: { all_signed: boolean }[] }).rows[0]?.all_signed === true;
  }

  /**
   * Up to `limit` versions without an envelope among those of skills written after catalogue revision
   * `changedAfter` (the changed skills by their revision's index, then their versions).
   */
  async unsignedOfSkillsChangedAfter(changedAfter: number, limit: number): Promise<AttestedVersion[]> {
    const rows = await this.db
      .select(attestedColumns)
      .from(skills)
      .innerJoin(skillVersions, eq(skillVersions.skillId, skills.id))
      .leftJoin(attestations, eq(attestations.versionId, skillVersions.id))
      .where(and(gt(skills.changedRevision, changedAfter), isNull(attestations.versionId)))
      .limit(limit);
    return rows.map(attestedOf);
  }

  /**
   * The versions without an envelope among the `limit` versions by id after `after`, and the last id
   * of those: each window walks the primary key from where the last ended, so a backfill reads every
   * version once, where asking for the first `limit` unsigned ones read the whole table each time.
   */
  async unsignedAfter(
    after: string | undefined,
    limit: number,
  ): Promise<{ versions: AttestedVersion[]; last: string | undefined }> {
    const window = await this.db
      .select({ id: skillVersions.id })
      .from(skillVersions)
      .where(after === undefined ? undefined : gt(skillVersions.id, after))
      .orderBy(skillVersions.id)
      .limit(limit);
    const last = window.at(-1)?.id;
    if (last === undefined) return { versions: [], last };
    const rows = await this.db
      .select(attestedColumns)
      .from(skillVersions)
      .innerJoin(skills, eq(skills.id, skillVersions.skillId))
      .leftJoin(attestations, eq(attestations.versionId, skillVersions.id))
      .where(
        and(
          isNull(attestations.versionId),
          inArray(
            skillVersions.id,
            window.map((row) => row.id),
          ),
        ),
      )
      .orderBy(skillVersions.id);
    return { versions: rows.map(attestedOf), last };
  }
}
