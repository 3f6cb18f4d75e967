import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { tokens } from '../db/schema.js';
import { NotFoundError } from '../domain/app-errors.js';
import { SCOPES } from '../wire/admin.js';
import type { OidcPublisher } from '../wire/types.js';
import { recordAudit } from './audit-repository.js';

/** The scopes are part of the wire (POST /tokens takes them): written there, once. */
export { SCOPES };
export type Scope = (typeof SCOPES)[number];

/** Who made a request, as the routes and the audit log see it. */
export interface Principal {
  /** "token:<name>" or "admin-token" (the bootstrap token from the environment). */
  actor: string;
  scopes: Scope[];
  tokenId?: string;
  /** Namespaces the token may act in (exact names, or prefixes ending in `*`); undefined: all. */
  namespaces?: string[];
  /** The CI identity of a token exchanged for an OIDC ID token (trusted publishing). */
  publisher?: OidcPublisher;
}

/** A principal's token name as logs show it: the stored token's name, else the actor ("admin-token"). */
export function tokenNameOf(actor: string): string {
  return actor.startsWith('token:') ? actor.slice('token:'.length) : actor;
}

export interface TokenSummary {
  id: string;
  name: string;
  scopes: Scope[];
  /** null: every namespace. */
  namespaces: string[] | null;
  prefix: string;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

const SECRET_PREFIX = 'skr_';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Scopes nest: admin can do everything publish can, publish everything read can. */
export function grants(scopes: readonly Scope[], needed: Scope): boolean {
  if (scopes.includes('admin')) return true;
  if (needed === 'read') return scopes.includes('read') || scopes.includes('publish');
  return scopes.includes(needed);
}

const summaryColumns = {
  id: tokens.id,
  name: tokens.name,
  scopes: tokens.scopes,
  namespaces: tokens.namespaces,
  prefix: tokens.prefix,
  createdBy: tokens.createdBy,
  createdAt: tokens.createdAt,
  expiresAt: tokens.expiresAt,
  lastUsedAt: tokens.lastUsedAt,
};

export class TokensRepository {
  constructor(private readonly db: Db) {}

  /** Creates a token and returns its secret, the only time the secret exists outside the caller. */
  async create(input: {
    name: string;
    scopes: Scope[];
    namespaces?: string[];
    expiresAt?: Date;
    actor: string;
    /** Trusted publishing: the CI identity the token stands for (its audit entry is the exchange's). */
    publisher?: OidcPublisher;
  }): Promise<TokenSummary & { secret: string }> {
    const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(tokens)
        .values({
          name: input.name,
          scopes: input.scopes,
          namespaces: input.namespaces ?? null,
          secretHash: hashSecret(secret),
          prefix: secret.slice(0, SECRET_PREFIX.length + 6),
          createdBy: input.actor,
          expiresAt: input.expiresAt ?? null,
          publisher: input.publisher ?? null,
        })
        .returning(summaryColumns);
      if (input.publisher) return { ...(row as TokenSummary), secret };
      await recordAudit(tx, {
        actor: input.actor,
        action: 'token.create',
        detail: {
          id: row!.id,
          name: input.name,
          scopes: input.scopes,
          ...(input.namespaces ? { namespaces: input.namespaces } : {}),
        },
      });
      return { ...(row as TokenSummary), secret };
    });
  }

  async list(): Promise<TokenSummary[]> {
    const rows = await this.db
      .select(summaryColumns)
      .from(tokens)
      // Exchanged CI tokens (one per job) are listed while they live, not forever after.
      .where(and(isNull(tokens.revokedAt), or(isNull(tokens.publisher), gt(tokens.expiresAt, sql`now()`))))
      .orderBy(desc(tokens.createdAt));
    return rows as TokenSummary[];
  }

  /** One active token's summary (never its secret), or undefined once revoked or unknown. */
  async summary(id: string): Promise<TokenSummary | undefined> {
    const [row] = await this.db
      .select(summaryColumns)
      .from(tokens)
      .where(and(eq(tokens.id, id), isNull(tokens.revokedAt)));
    return row as TokenSummary | undefined;
  }

  async revoke(id: string, actor: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(tokens)
        .set({ revokedAt: new Date() })
        .where(and(eq(tokens.id, id), isNull(tokens.revokedAt)))
        .returning({ name: tokens.name });
      if (!row)
        throw new NotFoundError(`no active token with id '${id}'; list tokens with GET /tokens`, { id });
      await recordAudit(tx, { actor, action: 'token.revoke', detail: { id, name: row.name } });
    });
  }

  /**
   * The principal a presented secret stands for (given as its SHA-256, hashSecret), or why it stands
   * for nobody (with the token's name when the secret is one of a revoked or expired token, for the
   * security log).
   */
  async authenticate(
    secretHash: string,
  ): Promise<Principal | { refused: 'unknown' } | { refused: 'revoked' | 'expired'; name: string }> {
    const [row] = await this.db
      .select({
        id: tokens.id,
        name: tokens.name,
        scopes: tokens.scopes,
        namespaces: tokens.namespaces,
        expiresAt: tokens.expiresAt,
        revokedAt: tokens.revokedAt,
        publisher: tokens.publisher,
      })
      .from(tokens)
      .where(eq(tokens.secretHash, secretHash));
    if (!row) return { refused: 'unknown' };
    if (row.revokedAt) return { refused: 'revoked', name: row.name };
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) return { refused: 'expired', name: row.name };
    // Best effort: a missed last-used stamp must never fail the request it describes.
    this.db
      .update(tokens)
      .set({ lastUsedAt: new Date() })
      .where(eq(tokens.id, row.id))
      .catch(() => {});
    return {
      actor: `token:${row.name}`,
      scopes: row.scopes as Scope[],
      tokenId: row.id,
      ...(row.namespaces ? { namespaces: row.namespaces } : {}),
      ...(row.publisher ? { publisher: row.publisher } : {}),
    };
  }
}
