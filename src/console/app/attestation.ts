import type { DsseEnvelope, SigningKeys } from '../../wire/types';
import { getJson, type Scope, skillPath } from './api';

export interface AttestationStatus {
  state: 'verified' | 'failed' | 'unsupported';
  detail: string;
  kid?: string;
  publishedAt?: string;
  publisher?: string;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** DSSE's pre-authentication encoding, as src/provenance/dsse.ts builds it on the server. */
function preAuthEncoding(payloadType: string, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const encoder = new TextEncoder();
  const type = encoder.encode(payloadType);
  const parts = [
    encoder.encode(`DSSEv1 ${type.length} `),
    type,
    encoder.encode(` ${payload.length} `),
    payload,
  ];
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Checks a version's attestation in the browser (WebCrypto Ed25519) against the registry's JWKS: the
 * signature, and that the signed subject is the version's digest. What `skillreg verify` does, less
 * the re-download of the bytes.
 */
export async function checkAttestation(
  scope: Scope,
  name: string,
  version: string,
  digest: string,
): Promise<AttestationStatus> {
  const [envelope, jwks] = await Promise.all([
    getJson<DsseEnvelope>(skillPath(scope, name, `/attestation?version=${encodeURIComponent(version)}`)),
    getJson<SigningKeys>('/.well-known/skillreg/keys.json'),
  ]);
  const payload = base64Bytes(envelope.payload);
  const statement = JSON.parse(new TextDecoder().decode(payload)) as {
    subject: { digest: { sha256: string } }[];
    predicate?: { publishedAt?: string; publisher?: string };
  };
  const signed = `sha256:${statement.subject[0]?.digest.sha256 ?? ''}`;
  const meta = { publishedAt: statement.predicate?.publishedAt, publisher: statement.predicate?.publisher };
  if (signed !== digest) {
    return {
      state: 'failed',
      detail: `the statement signs ${signed}, not this version's ${digest}`,
      ...meta,
    };
  }
  if (!crypto.subtle) return { state: 'unsupported', detail: 'this browser has no WebCrypto here', ...meta };
  const message = preAuthEncoding(envelope.payloadType, payload);
  for (const signature of envelope.signatures) {
    const jwk = jwks.keys.find((key) => key.kid === signature.keyid);
    if (!jwk) continue;
    try {
      const { kid: _kid, ...keyData } = jwk;
      const key = await crypto.subtle.importKey('jwk', keyData, { name: 'Ed25519' }, false, ['verify']);
      if (await crypto.subtle.verify({ name: 'Ed25519' }, key, base64Bytes(signature.sig), message)) {
        return {
          state: 'verified',
          detail: 'signature and subject digest verified in this browser',
          kid: signature.keyid,
          ...meta,
        };
      }
    } catch (error) {
      return {
        state: 'unsupported',
        detail: `Ed25519 is not available here (${(error as Error).message})`,
        ...meta,
      };
    }
  }
  return { state: 'failed', detail: 'no signature verifies with the keys the registry lists', ...meta };
}
