import { AppError } from '../domain/app-errors.js';
import type { AuditQuery, AuditRepository } from '../storage/audit-repository.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type { Principal, Scope, TokenSummary, TokensRepository } from '../storage/tokens-repository.js';

const DAY_MS = 86_400_000;

/** Who a request's token is (GET /auth/whoami): the bootstrap admin token has no row of its own. */
export type TokenIdentity =
  | { kind: 'bootstrap'; principal: Principal }
  | { kind: 'token'; principal: Principal; token: TokenSummary };

/**
 * Tokens: issuing, listing, revoking, and authenticating a presented secret. Only the secret's hash
 * is stored; the secret is answered once, at creation.
 */
export class TokenService {
  constructor(private readonly tokens: TokensRepository) {}

  /** A new token; repeated scopes and namespaces count once, `expiresInDays` counts from now. */
  create(input: {
    name: string;
    scopes: readonly Scope[];
    namespaces?: readonly string[];
    expiresInDays?: number;
    actor: string;
  }): Promise<TokenSummary & { secret: string }> {
    const { name, scopes, namespaces, expiresInDays, actor } = input;
    return this.tokens.create({
      name,
      scopes: [...new Set(scopes)],
      ...(namespaces ? { namespaces: [...new Set(namespaces)] } : {}),
      expiresAt: expiresInDays ? new Date(Date.now() + expiresInDays * DAY_MS) : undefined,
      actor,
    });
  }

  /** Tokens not revoked, newest first (expired ones included: an admin sees what to clean up). */
  list(): Promise<TokenSummary[]> {
    return this.tokens.list();
  }

  /** Unexpired tokens that may publish or administer (none, with no admin token: a read-only registry). */
  async writers(): Promise<TokenSummary[]> {
    const now = Date.now();
    return (await this.tokens.list()).filter(
      (token) =>
        (token.scopes.includes('publish') || token.scopes.includes('admin')) &&
        (!token.expiresAt || token.expiresAt.getTime() > now),
    );
  }

  /** 401 problems for an anonymous request and for a token revoked since it was checked. */
  async identify(principal: Principal): Promise<TokenIdentity> {
    if (principal.actor === 'anonymous') {
      throw new AppError(
        401,
        'Unauthorized',
        "no token was presented: send 'Authorization: Bearer <token>' to learn which token it is",
        { reason: 'missing' },
      );
    }
    if (!principal.tokenId) return { kind: 'bootstrap', principal };
    const token = await this.tokens.summary(principal.tokenId);
    if (!token) {
      throw new AppError(401, 'Unauthorized', 'the bearer token was revoked; ask an admin for a new one', {
        reason: 'revoked',
      });
    }
    return { kind: 'token', principal, token };
  }

  /** 404 when no such token is active; recorded in the audit log. */
  revoke(id: string, actor: string): Promise<void> {
    return this.tokens.revoke(id, actor);
  }

  /** The principal a stored secret hash stands for, or why it is refused. */
  authenticate(
    digest: Parameters<TokensRepository['authenticate']>[0],
  ): ReturnType<TokensRepository['authenticate']> {
    return this.tokens.authenticate(digest);
  }
}

/** The admin's lists that are not listings of skills: the audit log and the quarantine. */
export class AdminListService {
  constructor(
    private readonly audit: AuditRepository,
    private readonly skills: SkillsRepository,
  ) {}

  /** A page of the audit log, newest first; a cursor this registry did not issue is a 400. */
  auditPage(query: AuditQuery) {
    return this.audit.list(query);
  }

  /** Versions the scan blocked, awaiting review (`held`) or rejected, newest first. */
  quarantined(state: 'held' | 'rejected', limit: number) {
    return this.skills.quarantined(state, limit);
  }
}
