import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/**
 * An OIDC issuer run by the tests, shaped like GitHub Actions': its own signing keys, a discovery
 * document, a JWKS, and a runner-style token endpoint (`GET /token?audience=` with the job's request
 * token as a bearer) answering `{value: <ID token>}`. Keys rotate on demand.
 */

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TokenOptions {
  audience?: string | string[];
  /** Claims to add or replace (GitHub's: repository, workflow_ref, ref, sha, run_id, environment...). */
  claims?: Record<string, unknown>;
  /** Seconds from now; negative for a token already expired. */
  expiresIn?: number;
  /** Seconds from now the token becomes valid (nbf). */
  notBefore?: number;
  /** Sign with a key the issuer never published (a forged token). */
  forged?: boolean;
  /** Another issuer URL in `iss`. */
  issuer?: string;
}

export interface TestIssuer {
  url: string;
  /** The bearer the token endpoint wants (ACTIONS_ID_TOKEN_REQUEST_TOKEN). */
  requestToken: string;
  /** ACTIONS_ID_TOKEN_REQUEST_URL, as GitHub's runner gives it (with a query already). */
  requestUrl: string;
  /** Claims every token carries unless overridden. */
  defaults: Record<string, unknown>;
  sign(options?: TokenOptions): Promise<string>;
  /** A new current key; the old one stays published unless `dropOld`. */
  rotate(options?: { dropOld?: boolean }): Promise<void>;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomBytes(8).toString('hex');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk };
}

export async function startTestIssuer(defaults: Record<string, unknown> = {}): Promise<TestIssuer> {
  let keys = [await newKey()];
  const forgery = await newKey();
  const requestToken = randomBytes(16).toString('hex');
  let fetches = 0;
  let url = '';
  const claims: Record<string, unknown> = {
    repository: 'acme/skills',
    repository_owner: 'acme',
    workflow_ref: 'acme/skills/.github/workflows/publish.yml@refs/heads/main',
    ref: 'refs/heads/main',
    sha: 'a'.repeat(40),
    run_id: '4242',
    event_name: 'push',
    ...defaults,
  };

  async function sign(options: TokenOptions = {}): Promise<string> {
    const key = options.forged ? { ...forgery, kid: keys.at(-1)!.kid } : keys.at(-1)!;
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims, ...options.claims };
    const repository = String(payload.repository);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(options.issuer ?? url)
      .setSubject(`repo:${repository}:ref:${String(payload.ref)}`)
      .setAudience(options.audience ?? 'unset')
      .setIssuedAt(now + Math.min(0, options.notBefore ?? 0))
      .setNotBefore(now + (options.notBefore ?? 0))
      .setExpirationTime(now + (options.expiresIn ?? 300))
      .setJti(randomBytes(8).toString('hex'))
      .sign(key.privateKey);
  }

  const server: Server = createServer((request, response) => {
    const address = new URL(request.url ?? '/', url);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (address.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer: url,
        jwks_uri: `${url}/.well-known/jwks`,
        subject_types_supported: ['public', 'pairwise'],
        response_types_supported: ['id_token'],
        claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'ref', 'repository', 'sha'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (address.pathname === '/.well-known/jwks') {
      fetches += 1;
      return json(200, { keys: keys.map((key) => key.publicJwk) });
    }
    if (address.pathname === '/token') {
      if (request.headers.authorization !== `bearer ${requestToken}`) {
        return json(401, { message: 'bad request token' });
      }
      const audience = address.searchParams.get('audience') ?? undefined;
      sign({ audience }).then(
        (value) => json(200, { count: 1, value }),
        (error: Error) => json(500, { message: error.message }),
      );
      return;
    }
    json(404, { message: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requestToken,
    requestUrl: `${url}/token?api-version=2.0`,
    defaults: claims,
    sign,
    async rotate(options = {}) {
      const next = await newKey();
      keys = options.dropOld ? [next] : [...keys, next];
    },
    jwksFetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
