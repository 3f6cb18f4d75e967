import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import { allows, grantsOf, type Need, tokenNeeded, useSession, type Where } from './session';

/** Loads something when its key changes; `reload` asks again. */
export function useAsync<T>(load: () => Promise<T>, key: unknown[]) {
  const [state, setState] = useState<{ value?: T; error?: ApiError | Error; loading: boolean }>({
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (value) => live && setState({ value, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...key, round]);
  return { ...state, reload: () => setRound((n) => n + 1) };
}

export function ErrorNote({ error }: { error: Error }) {
  const signIn = error instanceof ApiError && (error.status === 401 || error.status === 403);
  return (
    <div class="error" role="alert">
      <strong>{error instanceof ApiError ? `${error.status} ${error.title}` : 'Error'}</strong>
      {error instanceof ApiError && error.detail ? <p>{error.detail}</p> : <p>{error.message}</p>}
      {signIn ? <p>Sign in with a token that may do this (top right).</p> : null}
    </div>
  );
}

/**
 * Said up front where the session may not do something (no request is made to find out): which token
 * it takes, and for a token that falls short, what it has.
 */
export function SignInNote({ need, where, to }: { need: Need; where: Where; to: string }) {
  const session = useSession();
  const identity = session.state === 'signed-in' ? session.identity : null;
  return (
    <p class="notice" role="note">
      {identity ? (
        <>
          The token <strong>{identity.name}</strong> ({grantsOf(identity)}) cannot {to}: that takes{' '}
          {tokenNeeded(need, where, true)}. Sign out and sign in with one (top right).
        </>
      ) : (
        <>
          Sign in with {tokenNeeded(need, where)} to {to} (top right).
        </>
      )}
    </p>
  );
}

/** With SKILLREG_READ_AUTH=true an anonymous reader is told so instead of getting a 401 per request. */
export function ReadsNeedTokenNote({ to }: { to: string }) {
  return (
    <p class="notice" role="note">
      This registry needs a token for every read (SKILLREG_READ_AUTH=true). Sign in with a token with scope
      read (top right) to {to}.
    </p>
  );
}

/**
 * A page whose content mounts (and makes its requests) only for a session the registry would serve:
 * an admin page over every namespace, or a read of the catalogue (public unless SKILLREG_READ_AUTH,
 * and open to any token). Anyone else sees the page's title and the token it takes.
 */
export function PageGate({
  title,
  need,
  to,
  children,
}: {
  title: ComponentChildren;
  need: 'read' | 'admin';
  /** What the page does, after "Sign in with ... to": "see tokens". */
  to: string;
  children: ComponentChildren;
}) {
  const session = useSession();
  if (allows(session, need, need === 'admin' ? 'every-namespace' : 'any-namespace')) return <>{children}</>;
  return (
    <div>
      <h1>{title}</h1>
      {need === 'admin' ? (
        <SignInNote need="admin" where="every-namespace" to={to} />
      ) : (
        <ReadsNeedTokenNote to={to} />
      )}
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}

export function Verdict({ verdict }: { verdict: string | null | undefined }) {
  const label = verdict ?? 'unscanned';
  return <span class={`badge verdict-${label}`}>{label}</span>;
}

export function Section({
  title,
  children,
  id,
}: {
  title: string;
  children: ComponentChildren;
  id?: string;
}) {
  return (
    <section aria-labelledby={id ?? slug(title)}>
      <h2 id={id ?? slug(title)}>{title}</h2>
      {children}
    </section>
  );
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toISOString().replace('T', ' ').slice(0, 16);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
