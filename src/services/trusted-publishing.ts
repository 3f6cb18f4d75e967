import type { FastifyBaseLogger } from 'fastify';
import { decodeJwt, type JWTPayload } from 'jose';
import { BadRequestError, NotFoundError } from '../domain/app-errors.js';
import type { TokensRepository } from '../storage/tokens-repository.js';
import type {
  TrustedPublisherRow,
  TrustedPublishersRepository,
} from '../storage/trusted-publishers-repository.js';
import { TRUSTED_PUBLISHER_CLAIMS } from '../wire/trusted-publishing.js';
import type {
  OidcExchangeResult,
  OidcPublisher,
  TrustedPublisher,
  TrustedPublisherBody,
} from '../wire/types.js';
import { ExchangeRefusedError, type OidcIssuers } from './oidc-issuers.js';

/**
 * Trusted publishing (CONTRACT.md "Trusted publishing and shadowing"): admins bind a namespace to a CI
 * identity; a CI job exchanges its OIDC ID token for a publish token of at most EXCHANGED_TOKEN_MS,
 * limited to exactly the namespaces bound to it, whose versions' attestations name that identity.
 * Every exchange, granted or refused, is in the audit log; a refusal is logged at warn as well.
 */

/** How long an exchanged publish token lives: enough for one CI job's publish or sync. */
export const EXCHANGED_TOKEN_MS = 15 * 60 * 1000;

const BINDING_ID = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;

export class TrustedPublishingService {
  constructor(
    private readonly bindings: TrustedPublishersRepository,
    private readonly tokens: TokensRepository,
    private readonly issuers: OidcIssuers,
  ) {}

  async list(namespace: string): Promise<TrustedPublisher[]> {
    return (await this.bindings.list(namespace)).map(wireOf);
  }

  async get(namespace: string, id: string): Promise<TrustedPublisher> {
    const row = await this.bindings.get(namespace, id);
    if (!row) throw missing(namespace, id);
    return wireOf(row);
  }

  async put(
    namespace: string,
    id: string,
    body: TrustedPublisherBody,
    actor: string,
  ): Promise<{ publisher: TrustedPublisher; created: boolean }> {
    if (!BINDING_ID.test(id)) {
      throw new BadRequestError(
        `trusted publisher id '${id}' is not valid: use 1-64 lowercase letters, digits, '.', '_' or '-', starting and ending with a letter or digit (e.g. github-main)`,
        { id },
      );
    }
    const issuer = body.issuer.replace(/\/+$/, '');
    if (!this.issuers.accepts(issuer)) {
      const accepted = this.issuers.list;
      throw new BadRequestError(
        `issuer '${issuer}' is not one this registry trusts; ${accepted.length ? `SKILLREG_OIDC_ISSUERS lists ${accepted.map((one) => `'${one}'`).join(', ')}` : 'SKILLREG_OIDC_ISSUERS lists none, so trusted publishing is off'}. Add it there first`,
        { issuer, issuers: accepted },
      );
    }
    const claims: Record<string, string> = {};
    for (const claim of TRUSTED_PUBLISHER_CLAIMS) {
      const value = body.claims[claim];
      if (value !== undefined) claims[claim] = value;
    }
    const { row, created } = await this.bindings.put({ namespace, id, issuer, claims, actor });
    return { publisher: wireOf(row), created };
  }

  async remove(namespace: string, id: string, actor: string): Promise<void> {
    if (!(await this.bindings.remove(namespace, id, actor))) throw missing(namespace, id);
  }

  /**
   * An ID token exchanged for a short-lived publish token. `audiences` are the values its `aud` may
   * name. Refusals throw ExchangeRefusedError (401, or 403 when no binding matches) after they are
   * audited and logged.
   */
  async exchange(
    token: string,
    audiences: readonly string[],
    log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
  ): Promise<OidcExchangeResult> {
    let claims: JWTPayload | undefined;
    try {
      claims = await this.issuers.verify(token, audiences);
      const publisher = publisherOf(claims);
      const matching = (await this.bindings.forIssuer(publisher.issuer)).filter((binding) =>
        Object.entries(binding.claims).every(([claim, value]) => claims![claim] === value),
      );
      if (matching.length === 0) {
        throw new ExchangeRefusedError(
          'no-binding',
          `no namespace trusts this CI identity (issuer ${publisher.issuer}, repository '${publisher.repository}', workflow_ref '${publisher.workflow_ref ?? ''}', ref '${publisher.ref ?? ''}'${typeof claims.environment === 'string' ? `, environment '${claims.environment}'` : ''}); an admin binds one with PUT /namespaces/{namespace}/trusted-publishers/{id}`,
          { issuer: publisher.issuer, repository: publisher.repository },
        );
      }
      const namespaces = [...new Set(matching.map((binding) => binding.namespace))].sort();
      const expiresAt = new Date(Date.now() + EXCHANGED_TOKEN_MS);
      const created = await this.tokens.create({
        name: `oidc:${publisher.repository}`,
        scopes: ['publish'],
        namespaces,
        expiresAt,
        actor: `oidc:${publisher.repository}`,
        publisher,
      });
      await this.bindings.audit({
        actor: `oidc:${publisher.repository}`,
        action: 'oidc.exchange',
        detail: {
          ...publisher,
          namespaces,
          bindings: matching.map((binding) => `${binding.namespace}/${binding.id}`),
          tokenId: created.id,
          expiresAt: expiresAt.toISOString(),
        },
      });
      log.info(
        { event: 'oidc.exchange', repository: publisher.repository, run_id: publisher.run_id, namespaces },
        'OIDC token exchanged for a publish token',
      );
      return { secret: created.secret, expiresAt: expiresAt.toISOString(), scopes: ['publish'], namespaces };
    } catch (error) {
      if (error instanceof ExchangeRefusedError) await this.refused(error, claims, token, log);
      throw error;
    }
  }

  private async refused(
    error: ExchangeRefusedError,
    verified: JWTPayload | undefined,
    token: string,
    log: Pick<FastifyBaseLogger, 'warn'>,
  ): Promise<void> {
    // What the token claims, for the reader of the log: unverified unless the refusal came after the check.
    let claimed: JWTPayload = verified ?? {};
    if (!verified) {
      try {
        claimed = decodeJwt(token);
      } catch {
        claimed = {};
      }
    }
    const said = (claim: string) =>
      typeof claimed[claim] === 'string' ? (claimed[claim] as string).slice(0, 300) : null;
    const detail = {
      reason: error.reason,
      verified: verified !== undefined,
      issuer: said('iss'),
      repository: said('repository'),
      workflow_ref: said('workflow_ref'),
      ref: said('ref'),
      run_id: said('run_id'),
    };
    log.warn({ event: 'oidc.refused', ...detail }, `OIDC exchange refused: ${error.message}`);
    await this.bindings.audit({ actor: 'anonymous', action: 'oidc.refused', detail }).catch(() => {});
  }
}

/** The identity a verified token stands for; `repository` is required (every binding names one). */
function publisherOf(claims: JWTPayload): OidcPublisher {
  const text = (claim: string) => (typeof claims[claim] === 'string' ? (claims[claim] as string) : null);
  const repository = text('repository');
  if (!repository) {
    throw new ExchangeRefusedError(
      'missing-claim',
      "the token has no 'repository' claim; trusted publishing needs a CI identity token such as GitHub Actions' (permissions: id-token: write)",
    );
  }
  return {
    kind: 'oidc',
    issuer: (claims.iss as string).replace(/\/+$/, ''),
    repository,
    workflow_ref: text('workflow_ref'),
    ref: text('ref'),
    sha: text('sha'),
    run_id: text('run_id'),
  };
}

function wireOf(row: TrustedPublisherRow): TrustedPublisher {
  return {
    id: row.id,
    namespace: row.namespace,
    issuer: row.issuer,
    claims: row.claims,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function missing(namespace: string, id: string): NotFoundError {
  return new NotFoundError(
    `namespace '${namespace}' has no trusted publisher '${id}'; GET /namespaces/${namespace}/trusted-publishers lists them`,
    { namespace, id },
  );
}
