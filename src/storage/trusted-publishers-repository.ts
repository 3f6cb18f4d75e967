import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { trustedPublishers } from '../db/schema.js';
import { type AuditEntry, recordAudit } from './audit-repository.js';

/** Trusted publishers (namespace bindings to CI identities): queries and audited writes. */

export interface TrustedPublisherRow {
  namespace: string;
  id: string;
  issuer: string;
  claims: Record<string, string>;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export class TrustedPublishersRepository {
  constructor(private readonly db: Db) {}

  async list(namespace: string): Promise<TrustedPublisherRow[]> {
    return this.db
      .select()
      .from(trustedPublishers)
      .where(eq(trustedPublishers.namespace, namespace))
      .orderBy(asc(trustedPublishers.id));
  }

  async get(namespace: string, id: string): Promise<TrustedPublisherRow | undefined> {
    const [row] = await this.db
      .select()
      .from(trustedPublishers)
      .where(and(eq(trustedPublishers.namespace, namespace), eq(trustedPublishers.id, id)));
    return row;
  }

  /** Every binding to an issuer, across namespaces: what an exchange matches a token's claims against. */
  async forIssuer(issuer: string): Promise<TrustedPublisherRow[]> {
    return this.db
      .select()
      .from(trustedPublishers)
      .where(eq(trustedPublishers.issuer, issuer))
      .orderBy(asc(trustedPublishers.namespace), asc(trustedPublishers.id));
  }

  /** Creates or replaces a binding; answers it and whether it was created. Audited. */
  async put(input: {
    namespace: string;
    id: string;
    issuer: string;
    claims: Record<string, string>;
    actor: string;
  }): Promise<{ row: TrustedPublisherRow; created: boolean }> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(trustedPublishers)
        .values({
          namespace: input.namespace,
          id: input.id,
          issuer: input.issuer,
          claims: input.claims,
          createdBy: input.actor,
        })
        .onConflictDoUpdate({
          target: [trustedPublishers.namespace, trustedPublishers.id],
          set: { issuer: input.issuer, claims: input.claims, updatedAt: sql`now()` },
        })
        // xmax is 0 for a row this statement inserted, set for one it updated.
        .returning({ ...columns, inserted: sql<boolean>`(xmax = 0)` });
      const { inserted, ...stored } = row!;
      await recordAudit(tx, {
        actor: input.actor,
        action: 'trusted-publisher.put',
        namespace: input.namespace,
        detail: { id: input.id, issuer: input.issuer, claims: input.claims, created: inserted },
      });
      return { row: stored, created: inserted };
    });
  }

  /** An exchange's audit entry, granted or refused (it changes no binding, so stands alone). */
  async audit(entry: AuditEntry): Promise<void> {
    await recordAudit(this.db, entry);
  }

  /** Removes a binding; false when there was none. Audited. */
  async remove(namespace: string, id: string, actor: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .delete(trustedPublishers)
        .where(and(eq(trustedPublishers.namespace, namespace), eq(trustedPublishers.id, id)))
        .returning({ issuer: trustedPublishers.issuer, claims: trustedPublishers.claims });
      if (!row) return false;
      await recordAudit(tx, {
        actor,
        action: 'trusted-publisher.delete',
        namespace,
        detail: { id, issuer: row.issuer, claims: row.claims },
      });
      return true;
    });
  }
}

const columns = {
  namespace: trustedPublishers.namespace,
  id: trustedPublishers.id,
  issuer: trustedPublishers.issuer,
  claims: trustedPublishers.claims,
  createdBy: trustedPublishers.createdBy,
  createdAt: trustedPublishers.createdAt,
  updatedAt: trustedPublishers.updatedAt,
};
