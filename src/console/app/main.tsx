import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { formatDate, Loading } from './components';
import { decoded } from './links';
import { scopeOf } from './page-scope';
import { CataloguePage } from './pages/catalogue';
import { AuditPage, QuarantinePage, UsagePage } from './pages/review';
import { ScopesPage } from './pages/scopes';
import { SkillPage } from './pages/skill';
import { TokensPage } from './pages/tokens';
import { interceptLinks, useLocation } from './router';
import { endSession, grantsOf, restoreSession, signInWith, useSession } from './session';

const NAV = [
  ['/ui', 'Catalogue'],
  ['/ui/namespaces', 'Namespaces and views'],
  ['/ui/usage', 'Usage'],
  ['/ui/tokens', 'Tokens'],
  ['/ui/audit', 'Audit log'],
  ['/ui/quarantine', 'Quarantine'],
] as const;

function SignIn() {
  const session = useSession();
  const [value, setValue] = useState('');
  const [refusal, setRefusal] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (session.state === 'checking') return <div class="signin muted">Checking the token…</div>;
  if (session.state === 'signed-in') {
    const identity = session.identity;
    return (
      <div class="signin">
        <span>
          {identity ? (
            <>
              Signed in as <strong>{identity.name}</strong>{' '}
              <span class="muted">
                ({grantsOf(identity)}
                {identity.expiresAt ? `; expires ${formatDate(identity.expiresAt)}` : ''})
              </span>
            </>
          ) : (
            <span class="muted" title={session.notice}>
              Signed in (token not checked)
            </span>
          )}
        </span>{' '}
        <button type="button" onClick={endSession}>
          Sign out
        </button>
      </div>
    );
  }
  return (
    <form
      class="signin"
      aria-label="Sign in"
      onSubmit={async (event) => {
        event.preventDefault();
        const candidate = value.trim();
        if (!candidate) return;
        setBusy(true);
        const refused = await signInWith(candidate);
        setBusy(false);
        setRefusal(refused);
        if (!refused) setValue('');
      }}
    >
      <label class="inline">
        Token{' '}
        <input
          type="password"
          autocomplete="off"
          value={value}
          aria-invalid={refusal ? 'true' : undefined}
          aria-describedby={refusal ? 'signin-refusal' : undefined}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          placeholder="registry token"
        />
      </label>{' '}
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {refusal || session.notice ? (
        <p id="signin-refusal" class="signin-refusal" role="alert">
          {refusal ?? session.notice}
        </p>
      ) : null}
    </form>
  );
}

function Page({ url }: { url: URL }) {
  const scope = scopeOf(url);
  const path = url.pathname.replace(/\/+$/, '') || '/ui';
  const skill = /^\/ui\/skills\/([^/]+)(?:\/files\/(.+))?$/.exec(path);
  if (skill)
    return (
      <SkillPage
        scope={scope}
        name={decoded(skill[1]!)}
        version={url.searchParams.get('version')}
        file={skill[2] ? skill[2].split('/').map(decoded).join('/') : null}
      />
    );
  switch (path) {
    case '/ui':
      return <CataloguePage scope={scope} />;
    case '/ui/namespaces':
      return <ScopesPage />;
    case '/ui/tokens':
      return <TokensPage />;
    case '/ui/audit':
      return <AuditPage />;
    case '/ui/quarantine':
      return <QuarantinePage />;
    case '/ui/usage':
      return <UsagePage scope={scope} />;
    default:
      return (
        <div>
          <h1>Not found</h1>
          <p>
            The console has no page at <code>{path}</code>. <a href="/ui">Back to the catalogue</a>.
          </p>
        </div>
      );
  }
}

/** A page's own address: a skill's file views are one page (moving between them keeps focus and scroll). */
function pageOf(pathname: string): string {
  return pathname.replace(/^(\/ui\/skills\/[^/]+)\/files\/.*$/, '$1');
}

function App() {
  const url = useLocation();
  const session = useSession();
  const [first, setFirst] = useState(true);
  const page = pageOf(url.pathname);
  useEffect(() => {
    document.title = `${NAV.find(([href]) => href === url.pathname)?.[1] ?? 'Skill'} · skill-registry`;
    // After an in-page navigation, focus moves to the new content (as a page load would start over);
    // on the first load it stays at the top, where the skip link is.
    if (first) setFirst(false);
    else {
      document.getElementById('main')?.focus({ preventScroll: true });
      if (!url.hash) scrollTo(0, 0);
    }
  }, [page]);
  // Signing in or out renders every page again with the new credentials.
  const sessionKey = session.state === 'signed-in' ? `in:${session.identity?.actor ?? '?'}` : session.state;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/ui">
          skill-registry
        </a>
        <nav aria-label="Console">
          <ul>
            {NAV.map(([href, label]) => (
              <li key={href}>
                <a href={href} aria-current={url.pathname === href ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
            <li>
              <a href="/docs" target="_blank" rel="noopener">
                API docs
              </a>
            </li>
          </ul>
        </nav>
        <SignIn />
      </header>
      <main id="main" tabIndex={-1} key={sessionKey}>
        {session.state === 'checking' ? <Loading /> : <Page url={url} />}
      </main>
    </div>
  );
}

document.addEventListener('click', interceptLinks);
render(<App />, document.getElementById('app')!);
void restoreSession();
