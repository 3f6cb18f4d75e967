import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { signIn, signOut, token } from './api';
import { CataloguePage } from './pages/catalogue';
import { AuditPage, QuarantinePage, UsagePage } from './pages/review';
import { ScopesPage } from './pages/scopes';
import { SkillPage } from './pages/skill';
import { TokensPage } from './pages/tokens';
import { interceptLinks, useLocation } from './router';
import { scopeOf } from './scope';

const NAV = [
  ['/ui', 'Catalogue'],
  ['/ui/namespaces', 'Namespaces and views'],
  ['/ui/usage', 'Usage'],
  ['/ui/tokens', 'Tokens'],
  ['/ui/audit', 'Audit log'],
  ['/ui/quarantine', 'Quarantine'],
] as const;

function SignIn({ onChange }: { onChange: () => void }) {
  const [value, setValue] = useState('');
  if (token()) {
    return (
      <div class="signin">
        <span class="muted">Signed in for this tab</span>{' '}
        <button
          type="button"
          onClick={() => {
            signOut();
            onChange();
          }}
        >
          Sign out
        </button>
      </div>
    );
  }
  return (
    <form
      class="signin"
      onSubmit={(event) => {
        event.preventDefault();
        if (!value.trim()) return;
        signIn(value.trim());
        setValue('');
        onChange();
      }}
    >
      <label class="inline">
        Token{' '}
        <input
          type="password"
          autocomplete="off"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          placeholder="registry token"
        />
      </label>{' '}
      <button type="submit">Sign in</button>
    </form>
  );
}

function Page({ url }: { url: URL }) {
  const scope = scopeOf(url);
  const path = url.pathname.replace(/\/+$/, '') || '/ui';
  const skill = /^\/ui\/skills\/([^/]+)$/.exec(path);
  if (skill)
    return (
      <SkillPage
        scope={scope}
        name={decodeURIComponent(skill[1]!)}
        version={url.searchParams.get('version')}
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

function App() {
  const url = useLocation();
  // Signing in or out re-renders every page with the new credentials.
  const [session, setSession] = useState(0);
  const [first, setFirst] = useState(true);
  useEffect(() => {
    document.title = `${NAV.find(([href]) => href === url.pathname)?.[1] ?? 'Skill'} · skill-registry`;
    // After an in-page navigation, focus moves to the new content (as a page load would start over);
    // on the first load it stays at the top, where the skip link is.
    if (first) setFirst(false);
    else document.getElementById('main')?.focus({ preventScroll: true });
  }, [url.pathname]);
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
        <SignIn onChange={() => setSession((n) => n + 1)} />
      </header>
      <main id="main" tabIndex={-1} key={session}>
        <Page url={url} />
      </main>
    </div>
  );
}

document.addEventListener('click', interceptLinks);
render(<App />, document.getElementById('app')!);
