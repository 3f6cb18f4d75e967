import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { issuerProblem } from '../config.js';
import { AppError } from '../domain/app-errors.js';

/**
 * The OIDC issuers trusted publishing accepts (SKILLREG_OIDC_ISSUERS) and the check of one ID token:
 * the issuer's discovery document names its `jwks_uri`; its keys are fetched with jose's remote key set,
 * which keeps them, fetches again when a token names a key it does not hold (the issuer rotated), and
 * no more often than its cooldown (a flood of made-up key ids cannot make the registry hammer the issuer).
 */

/** Why an exchange is refused: what the problem's `reason` says, and the audit log records. */
export type ExchangeRefusal =
  | 'malformed'
  | 'unknown-issuer'
  | 'bad-signature'
  | 'wrong-audience'
  | 'expired'
  | 'not-yet-valid'
  | 'missing-claim'
  | 'no-binding';

export class ExchangeRefusedError extends AppError {
  constructor(
    readonly reason: ExchangeRefusal,
    detail: string,
    extensions: Record<string, unknown> = {},
  ) {
    const status = reason === 'no-binding' ? 403 : 401;
    super(status, status === 401 ? 'Unauthorized' : 'Forbidden', detail, { reason, ...extensions });
  }
}

/** The issuer could not be asked for its keys: the registry's problem (or the issuer's), not the token's. */
class IssuerUnavailableError extends AppError {
  constructor(issuer: string, why: string) {
    super(
      503,
      'Service Unavailable',
      `the keys of OIDC issuer ${issuer} could not be fetched (${why}); try again shortly`,
      { issuer },
    );
  }
}

export interface OidcIssuersOptions {
  issuers: readonly string[];
  /** Seconds a token's times may be off the registry's clock. */
  clockToleranceSeconds?: number;
  /** Least time between two fetches of an issuer's keys (jose's cooldown). */
  keyCooldownMs?: number;
  /** How long a discovery document is kept before it is fetched again. */
  discoveryMaxAgeMs?: number;
  /** Time a fetch from an issuer may take. */
  timeoutMs?: number;
}

/** The algorithms CI issuers sign with (GitHub: RS256); symmetric ones are never accepted. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA'];

interface IssuerKeys {
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

export class OidcIssuers {
  private readonly issuers: Set<string>;
  private readonly keySets = new Map<string, Promise<IssuerKeys>>();

  constructor(private readonly options: OidcIssuersOptions) {
    this.issuers = new Set(options.issuers.map(normalise));
  }

  get list(): string[] {
    return [...this.issuers];
  }

  accepts(issuer: string): boolean {
    return this.issuers.has(normalise(issuer));
  }

  /** The token's verified claims, or an ExchangeRefusedError saying which check failed. */
  async verify(token: string, audiences: readonly string[]): Promise<JWTPayload> {
    let claimed: JWTPayload;
    try {
      decodeProtectedHeader(token);
      claimed = decodeJwt(token);
    } catch {
      throw new ExchangeRefusedError(
        'malformed',
        "the token is not a JWT; send the CI job's OIDC ID token (three base64url parts separated by dots)",
      );
    }
    const issuer = typeof claimed.iss === 'string' ? normalise(claimed.iss) : undefined;
    if (!issuer || !this.issuers.has(issuer)) {
      const accepted = this.list;
      throw new ExchangeRefusedError(
        'unknown-issuer',
        accepted.length === 0
          ? 'trusted publishing is off: SKILLREG_OIDC_ISSUERS lists no issuer'
          : `the token's issuer ${issuer ? `'${issuer}'` : '(none)'} is not trusted; this registry accepts tokens from ${accepted.map((one) => `'${one}'`).join(', ')} (SKILLREG_OIDC_ISSUERS)`,
        { issuer: issuer ?? null, issuers: accepted },
      );
    }
    const { keys } = await this.keysOf(issuer);
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: [issuer, `${issuer}/`],
        audience: [...audiences],
        algorithms: ALGORITHMS,
        clockTolerance: this.options.clockToleranceSeconds ?? 30,
        requiredClaims: ['exp'],
      });
      return payload;
    } catch (error) {
      throw refusalOf(error, issuer, audiences, claimed);
    }
  }

  /** The issuer's key set, from its discovery document (kept discoveryMaxAgeMs). */
  private async keysOf(issuer: string): Promise<IssuerKeys> {
    const maxAge = this.options.discoveryMaxAgeMs ?? 60 * 60 * 1000;
    const known = this.keySets.get(issuer);
    if (known) {
      const settled = await known.catch(() => undefined);
      if (settled && Date.now() - settled.fetchedAt < maxAge) return settled;
    }
    const fetching = this.discover(issuer);
    this.keySets.set(issuer, fetching);
    // A failed discovery is forgotten, so the next exchange asks again.
    fetching.catch(() => {
      if (this.keySets.get(issuer) === fetching) this.keySets.delete(issuer);
    });
    return fetching;
  }

  private async discover(issuer: string): Promise<IssuerKeys> {
    const timeoutMs = this.options.timeoutMs ?? 5_000;
    const url = `${issuer}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(url, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: 'application/json' },
        redirect: 'error',
      });
      if (!response.ok) throw new Error(`${url} answered ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      throw new IssuerUnavailableError(issuer, (error as Error).message);
    }
    if (typeof document.jwks_uri !== 'string' || issuerProblem(document.jwks_uri) !== undefined) {
      throw new IssuerUnavailableError(
        issuer,
        `its discovery document names no usable jwks_uri (an https:// URL, or http:// on loopback)`,
      );
    }
    if (typeof document.issuer === 'string' && normalise(document.issuer) !== issuer) {
      throw new IssuerUnavailableError(issuer, `its discovery document names issuer '${document.issuer}'`);
    }
    const keys = createRemoteJWKSet(new URL(document.jwks_uri), {
      timeoutDuration: timeoutMs,
      cooldownDuration: this.options.keyCooldownMs ?? 30_000,
      cacheMaxAge: 10 * 60 * 1000,
    });
    return { keys, fetchedAt: Date.now() };
  }
}

function normalise(issuer: string): string {
  return issuer.replace(/\/+$/, '');
}

function refusalOf(error: unknown, issuer: string, audiences: readonly string[], claimed: JWTPayload): Error {
  if (error instanceof errors.JWTExpired) {
    return new ExchangeRefusedError(
      'expired',
      `the token expired at ${isoOf(claimed.exp)}; request a fresh ID token from the CI job (they live minutes)`,
      { expiredAt: isoOf(claimed.exp) },
    );
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') {
      const named = Array.isArray(claimed.aud) ? claimed.aud : claimed.aud ? [claimed.aud] : [];
      return new ExchangeRefusedError(
        'wrong-audience',
        `the token's audience ${named.length ? named.map((one) => `'${one}'`).join(', ') : '(none)'} is not this registry; request the ID token with audience '${audiences[0]}' (SKILLREG_OIDC_AUDIENCE, else the registry's public URL)`,
        { audience: audiences[0] },
      );
    }
    if (error.claim === 'nbf' || error.claim === 'iat') {
      return new ExchangeRefusedError(
        'not-yet-valid',
        `the token is not valid yet (${error.claim} ${isoOf(claimed[error.claim] as number | undefined)}); check the clocks of the CI runner and the registry`,
      );
    }
    if (error.claim === 'exp') {
      return new ExchangeRefusedError('malformed', 'the token carries no usable expiry (exp)');
    }
    return new ExchangeRefusedError(
      'malformed',
      `the token's ${error.claim} claim is not valid: ${error.reason}`,
    );
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
    return new ExchangeRefusedError(
      'bad-signature',
      `the token's signature does not verify with any key that issuer ${issuer} publishes`,
    );
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new ExchangeRefusedError(
      'bad-signature',
      `the token is signed with an algorithm this registry does not accept (${ALGORITHMS.join(', ')})`,
    );
  }
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return new IssuerUnavailableError(issuer, (error as Error).message);
  }
  if (error instanceof errors.JOSEError) {
    return new ExchangeRefusedError('malformed', `the token could not be read: ${error.message}`);
  }
  if (error instanceof Error && !(error instanceof AppError)) {
    return new IssuerUnavailableError(issuer, error.message);
  }
  return error as Error;
}

function isoOf(seconds: number | undefined): string {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : '(none)';
}
