import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

/**
 * DSSE envelopes (github.com/secure-systems-lab/dsse, protocol v1) holding in-toto Statements v1,
 * signed with Ed25519, and the JWKS the public keys are published in. Pure: keys come in as KeyObjects,
 * nothing is read or stored here, so the server and `skillreg verify` share every byte of it.
 */

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/** What the registry attests: that it accepted and stored this version, with its publish-time scan. */
export const PREDICATE_TYPE = 'https://skill-registry.dev/attestation/publish/v1';

export interface Envelope {
  payloadType: string;
  /** base64 of the statement's JSON bytes (what is signed, through the PAE). */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** A CI identity proved with an OIDC ID token (the wire's oidcPublisherSchema; kept here, pure). */
export interface OidcIdentity {
  kind: 'oidc';
  issuer: string;
  repository: string;
  workflow_ref: string | null;
  ref: string | null;
  sha: string | null;
  run_id: string | null;
}

export interface PublishPredicate {
  namespace: string;
  name: string;
  version: string;
  /**
   * Who published the version: the token's actor, or for a trusted publish from CI the identity its
   * OIDC ID token proved (issuer, repository, workflow, ref, commit, run).
   */
  publisher: string | OidcIdentity;
  publishedAt: string;
  /** The verdict at publish (a later rescan may differ; GET /skills/{name} has the current one). */
  scan: { verdict: string; rules: string } | null;
  registry: string;
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: { name: string; digest: { sha256: string } }[];
  predicateType: typeof PREDICATE_TYPE;
  predicate: PublishPredicate;
}

export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/** The subject name of a version: `name@version`, prefixed by its namespace outside `default`. */
export function subjectName(
  namespace: string,
  name: string,
  version: string,
  defaultNamespace: string,
): string {
  return `${namespace === defaultNamespace ? '' : `${namespace}/`}${name}@${version}`;
}

export function statementOf(subject: string, digest: string, predicate: PublishPredicate): Statement {
  const hex = digest.replace(/^sha256:/, '');
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: subject, digest: { sha256: hex } }],
    predicateType: PREDICATE_TYPE,
    predicate,
  };
}

/** DSSE's pre-authentication encoding: what the signature covers. */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'ascii'),
    type,
    Buffer.from(` ${payload.length} `, 'ascii'),
    payload,
  ]);
}

export function signStatement(statement: Statement, privateKey: KeyObject, kid: string): Envelope {
  const payload = Buffer.from(JSON.stringify(statement), 'utf8');
  const sig = sign(null, preAuthEncoding(IN_TOTO_PAYLOAD_TYPE, payload), privateKey);
  return {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    payload: payload.toString('base64'),
    signatures: [{ keyid: kid, sig: sig.toString('base64') }],
  };
}

export type EnvelopeCheck = { ok: true; statement: Statement; kid: string } | { ok: false; problem: string };

/**
 * Checks an envelope against public keys by kid: the payload type, a signature by one of the keys
 * over the PAE, and a statement of the registry's shape. Never throws.
 */
export function verifyEnvelope(envelope: unknown, keys: ReadonlyMap<string, KeyObject>): EnvelopeCheck {
  const candidate = envelope as Partial<Envelope> | null;
  if (!candidate || typeof candidate.payload !== 'string' || !Array.isArray(candidate.signatures)) {
    return {
      ok: false,
      problem: 'the attestation is not a DSSE envelope (payloadType, payload, signatures)',
    };
  }
  if (candidate.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    return {
      ok: false,
      problem: `the envelope's payloadType is ${String(candidate.payloadType)}, not ${IN_TOTO_PAYLOAD_TYPE}`,
    };
  }
  const payload = Buffer.from(candidate.payload, 'base64');
  const signed = preAuthEncoding(IN_TOTO_PAYLOAD_TYPE, payload);
  let signer: string | undefined;
  const unknownKeys: string[] = [];
  for (const signature of candidate.signatures) {
    const key = keys.get(String(signature?.keyid));
    if (!key) {
      unknownKeys.push(String(signature?.keyid));
      continue;
    }
    try {
      if (verify(null, signed, key, Buffer.from(String(signature.sig), 'base64'))) {
        signer = String(signature.keyid);
        break;
      }
    } catch {
      // a malformed signature is one that does not verify
    }
  }
  if (signer === undefined) {
    return {
      ok: false,
      problem:
        unknownKeys.length === candidate.signatures.length
          ? `the envelope is signed by key ${unknownKeys.join(', ') || '(none)'}, which is not among the trusted keys`
          : 'the signature does not verify: the attestation was altered or signed by another key',
    };
  }
  let statement: Statement;
  try {
    statement = JSON.parse(payload.toString('utf8')) as Statement;
  } catch {
    return { ok: false, problem: 'the signed payload is not JSON' };
  }
  if (
    statement._type !== STATEMENT_TYPE ||
    !Array.isArray(statement.subject) ||
    !statement.subject[0]?.digest?.sha256
  ) {
    return { ok: false, problem: `the signed payload is not an in-toto Statement v1 with a sha256 subject` };
  }
  return { ok: true, statement, kid: signer };
}

/** The public JWK of an Ed25519 key, with its RFC 7638 thumbprint as kid. */
export function jwkOf(key: KeyObject): Jwk {
  const exported = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as {
    kty: string;
    crv: string;
    x: string;
  };
  if (exported.kty !== 'OKP' || exported.crv !== 'Ed25519') throw new Error('not an Ed25519 key');
  const thumbprint = createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x: exported.x }))
    .digest('base64url');
  return { kty: 'OKP', crv: 'Ed25519', x: exported.x, kid: thumbprint, use: 'sig', alg: 'EdDSA' };
}

/** The public key a JWK (or its `x`) stands for. */
export function publicKeyOfJwk(jwk: { x: string }): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
}
