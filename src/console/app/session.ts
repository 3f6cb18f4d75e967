import { useEffect, useState } from 'preact/hooks';
import { coversNamespace } from '../../domain/scope';
import { ApiError, type Identity, signIn, signOut, token, whoAmI } from './api';

/**
 * Who is signed in to this tab, as the pages need to know it before they ask the registry for
 * anything: a page its holder cannot use says so instead of firing a request that fails.
 */
export type Session =
  | { state: 'checking' }
  | { state: 'anonymous'; notice?: string }
  /** identity null: the token is kept but could not be checked (the registry was unreachable). */
  | { state: 'signed-in'; identity: Identity | null; notice?: string };

let current: Session = token() ? { state: 'checking' } : { state: 'anonymous' };
const listeners = new Set<() => void>();

function update(next: Session): void {
  current = next;
  for (const listener of listeners) listener();
}

export function useSession(): Session {
  const [session, setSession] = useState(current);
  useEffect(() => {
    const listener = () => setSession(current);
    listeners.add(listener);
    listener();
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return session;
}

/** The token this tab kept is checked again on load: it may have been revoked or expired since. */
export async function restoreSession(): Promise<void> {
  const kept = token();
  if (!kept) return;
  try {
    update({ state: 'signed-in', identity: await whoAmI(kept) });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      signOut();
      update({
        state: 'anonymous',
        notice: `The token this tab kept was refused (401): ${error.detail || error.title}. Signed out.`,
      });
    } else {
      update({
        state: 'signed-in',
        identity: null,
        notice: `The token could not be checked: ${(error as Error).message}`,
      });
    }
  }
}

/** Signs in only with a token the registry accepts; answers why not otherwise (nothing is kept then). */
export async function signInWith(candidate: string): Promise<string | null> {
  try {
    const identity = await whoAmI(candidate);
    signIn(candidate);
    update({ state: 'signed-in', identity });
    return null;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      return `This token was refused (${error.status}): ${error.detail || error.title}`;
    }
    if (error instanceof ApiError && error.status > 0) {
      return `The token could not be checked (${error.status} ${error.title}): ${error.detail}`;
    }
    return `The token could not be checked: ${(error as Error).message}`;
  }
}

export function endSession(): void {
  signOut();
  update({ state: 'anonymous' });
}

function meta(name: string): string | undefined {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content || undefined;
}

// The page's meta tags do not change while it is open (the module script runs once they are parsed).
const READ_AUTH = meta('skillreg-read-auth') === 'true';
const PUBLIC_URL = meta('skillreg-public-url') ?? location.origin;

/** SKILLREG_READ_AUTH=true: even the catalogue needs a token (the page says so in a meta tag). */
export function readsNeedToken(): boolean {
  return READ_AUTH;
}

/** The address agents and hosts are given: SKILLREG_PUBLIC_URL, else the one this page came from. */
export function publicUrl(): string {
  return PUBLIC_URL;
}

/** What a token may do, as the console says it: "admin; namespaces team-a". */
export function grantsOf(identity: Identity): string {
  const scopes = identity.scopes.join(', ');
  return identity.namespaces ? `${scopes}; namespaces ${identity.namespaces.join(', ')}` : scopes;
}

export type Need = 'read' | 'publish' | 'admin';

/**
 * Where a request acts, as the registry's authorization sees it: in one namespace, in no one namespace
 * (lists of namespaces and views), or over all of them (admin lists: a token limited to namespaces
 * may not make those).
 */
export type Where = { namespace: string } | 'any-namespace' | 'every-namespace';

/**
 * Scopes nest (admin > publish > read): the rule of grants() in src/storage/tokens-repository.ts,
 * restated because that module needs Node (crypto, the database) and cannot be bundled for a browser.
 */
function grants(scopes: readonly Need[], needed: Need): boolean {
  if (scopes.includes('admin')) return true;
  if (needed === 'read') return scopes.includes('read') || scopes.includes('publish');
  return scopes.includes(needed);
}

/** Whether the registry would let this session make a request needing `needed` at `where`. */
export function allows(session: Session, needed: Need, where: Where): boolean {
  const publicRead = needed === 'read' && !readsNeedToken();
  if (session.state !== 'signed-in') return publicRead;
  const identity = session.identity;
  if (!identity) return true; // not checked: the registry decides
  if (!grants(identity.scopes, needed)) return false;
  if (publicRead || where === 'any-namespace') return true;
  if (where === 'every-namespace') return identity.namespaces === null;
  return coversNamespace(identity.namespaces, where.namespace);
}

/**
 * What a token must be to do it, in words: "an admin token", or with `exactly` the namespace part
 * too ("an admin token not limited to namespaces"), for someone whose token falls short only there.
 */
export function tokenNeeded(needed: Need, where: Where, exactly = false): string {
  const kind = needed === 'admin' ? 'an admin token' : `a token with scope ${needed}`;
  if (where === 'any-namespace') return kind;
  if (where === 'every-namespace') return exactly ? `${kind} not limited to namespaces` : kind;
  return where.namespace === 'default' && !exactly ? kind : `${kind} for namespace '${where.namespace}'`;
}
