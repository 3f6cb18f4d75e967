import { useState } from 'preact/hooks';
import type { CreatedToken, CreateTokenBody, TokenList, TokenScope, TokenSummary } from '../../../wire/types';
import { getJson, send } from '../api';
import { ErrorNote, formatDate, Loading, PageGate, useAsync } from '../components';

/**
 * Every scope, the compiler checking the list against the wire's (importing the schema module itself
 * would bundle zod into the console).
 */
const SCOPES = Object.keys({ read: 0, publish: 0, admin: 0 } satisfies Record<TokenScope, 0>) as TokenScope[];

/** Tokens: create (the secret is shown once, here, and kept nowhere), list, revoke. */
export function TokensPage() {
  return (
    <PageGate title="Tokens" need="admin" to="see tokens">
      <Tokens />
    </PageGate>
  );
}

function Tokens() {
  const tokens = useAsync(() => getJson<TokenList>('/tokens'), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>(['read']);
  const [namespaces, setNamespaces] = useState('');
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [state, setState] = useState<{ error?: Error; done?: string }>({});
  const create = async (event: Event) => {
    event.preventDefault();
    const limited = namespaces
      .split(/[\s,]+/)
      .map((ns) => ns.trim())
      .filter(Boolean);
    try {
      const token = await send<CreatedToken>('POST', '/tokens', {
        name: name.trim(),
        scopes,
        ...(limited.length > 0 ? { namespaces: limited } : {}),
      } satisfies CreateTokenBody);
      setCreated({ name: token.name, secret: token.secret });
      setState({});
      setName('');
      tokens.reload();
    } catch (error) {
      setState({ error: error as Error });
    }
  };
  const revoke = async (token: TokenSummary) => {
    if (!confirm(`Revoke token ${token.name}? Whatever uses it stops working at once.`)) return;
    try {
      await send('DELETE', `/tokens/${token.id}`);
      setState({ done: `token ${token.name} revoked` });
      tokens.reload();
    } catch (error) {
      setState({ error: error as Error });
    }
  };
  return (
    <div>
      <h1>Tokens</h1>
      <form class="card" onSubmit={create} aria-label="Create a token">
        <label>
          Name
          <input
            type="text"
            required
            maxLength={100}
            value={name}
            placeholder="ci-main"
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="inline">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(
                    (e.target as HTMLInputElement).checked
                      ? [...scopes, scope]
                      : scopes.filter((s) => s !== scope),
                  )
                }
              />{' '}
              {scope}
            </label>
          ))}
        </fieldset>
        <label>
          Namespaces (optional: comma-separated names or prefixes ending in *)
          <input
            type="text"
            value={namespaces}
            placeholder="data, data-*"
            onInput={(e) => setNamespaces((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" disabled={scopes.length === 0}>
          Create token
        </button>
      </form>
      {created ? (
        <div class="card secret" role="status">
          <p>
            Token <strong>{created.name}</strong> created. Copy the secret now: it is shown only this once.
          </p>
          <label>
            Secret
            <input
              type="text"
              readOnly
              value={created.secret}
              onFocus={(e) => (e.target as HTMLInputElement).select()}
            />
          </label>
          <button type="button" onClick={() => setCreated(null)}>
            Done, hide it
          </button>
        </div>
      ) : null}
      <div aria-live="polite">
        {state.done ? <p class="ok">{state.done}</p> : null}
        {state.error ? <ErrorNote error={state.error} /> : null}
      </div>
      {tokens.error ? <ErrorNote error={tokens.error} /> : null}
      {tokens.loading ? <Loading /> : null}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Namespaces</th>
            <th scope="col">Prefix</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.value?.items.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>{token.scopes.join(', ')}</td>
              <td>{token.namespaces?.join(', ') ?? 'all'}</td>
              <td>
                <code>{token.prefix}…</code>
              </td>
              <td>{formatDate(token.lastUsedAt)}</td>
              <td>{formatDate(token.expiresAt)}</td>
              <td>
                <button type="button" class="danger" onClick={() => revoke(token)}>
                  Revoke <span class="visually-hidden">{token.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
