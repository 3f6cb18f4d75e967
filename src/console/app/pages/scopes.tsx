import { useState } from 'preact/hooks';
import type { NamespaceList, ViewBody, ViewList } from '../../../wire/types';
import { getJson, send } from '../api';
import { ErrorNote, formatDate, Loading, PageGate, Section, SignInNote, useAsync } from '../components';
import { allows, useSession } from '../session';

/** Namespaces (where teams publish) and views (layered reads over them), with a view editor. */
export function ScopesPage() {
  return (
    <PageGate title="Namespaces and views" need="read" to="see namespaces and views">
      <Scopes />
    </PageGate>
  );
}

function Scopes() {
  const mayEdit = allows(useSession(), 'admin', 'every-namespace');
  const namespaces = useAsync(() => getJson<NamespaceList>('/namespaces'), []);
  const views = useAsync(() => getJson<ViewList>('/views'), []);
  const [editing, setEditing] = useState<{ name: string; layers: string; description: string } | null>(null);
  const [state, setState] = useState<{ error?: Error; done?: string }>({});
  const save = async (event: Event) => {
    event.preventDefault();
    if (!editing) return;
    const layers = editing.layers
      .split(/[\s,]+/)
      .map((layer) => layer.trim())
      .filter(Boolean);
    try {
      await send('PUT', `/views/${encodeURIComponent(editing.name.trim())}`, {
        layers,
        description: editing.description.trim() || null,
      } satisfies ViewBody);
      setState({ done: `view ${editing.name.trim()} saved: ${layers.join(' < ')}` });
      setEditing(null);
      views.reload();
    } catch (error) {
      setState({ error: error as Error });
    }
  };
  return (
    <div>
      <h1>Namespaces and views</h1>
      <Section title="Namespaces">
        {namespaces.error ? <ErrorNote error={namespaces.error} /> : null}
        {namespaces.loading ? <Loading /> : null}
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col">Skills</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {namespaces.value?.items.map((ns) => (
              <tr key={ns.name}>
                <td>
                  <a href={ns.name === 'default' ? '/ui' : `/ui?ns=${encodeURIComponent(ns.name)}`}>
                    {ns.name}
                  </a>
                </td>
                <td>{ns.skills}</td>
                <td>{formatDate(ns.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Views">
        {views.error ? <ErrorNote error={views.error} /> : null}
        <table class="list">
          <thead>
            <tr>
              <th scope="col">View</th>
              <th scope="col">Layers (lowest precedence first)</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {views.value?.items.map((view) => (
              <tr key={view.name}>
                <td>
                  <a href={`/ui?view=${encodeURIComponent(view.name)}`}>{view.name}</a>
                  {view.description ? <div class="muted small">{view.description}</div> : null}
                </td>
                <td>{view.layers.join(' < ')}</td>
                <td>{formatDate(view.updatedAt)}</td>
                <td>
                  {mayEdit ? (
                    <button
                      type="button"
                      onClick={() =>
                        setEditing({
                          name: view.name,
                          layers: view.layers.join(', '),
                          description: view.description ?? '',
                        })
                      }
                    >
                      Edit <span class="visually-hidden">{view.name}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {mayEdit ? (
          <p>
            <button type="button" onClick={() => setEditing({ name: '', layers: '', description: '' })}>
              New view
            </button>
          </p>
        ) : (
          <SignInNote need="admin" where="every-namespace" to="create or edit views" />
        )}
        {editing ? (
          <form class="card" onSubmit={save} aria-label="Edit view">
            <label>
              Name
              <input
                type="text"
                required
                value={editing.name}
                onInput={(e) => setEditing({ ...editing, name: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Layers, lowest precedence first (comma-separated namespaces)
              <input
                type="text"
                required
                value={editing.layers}
                onInput={(e) => setEditing({ ...editing, layers: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Description
              <input
                type="text"
                value={editing.description}
                onInput={(e) => setEditing({ ...editing, description: (e.target as HTMLInputElement).value })}
              />
            </label>
            <button type="submit">Save view</button>{' '}
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </form>
        ) : null}
        <div aria-live="polite">
          {state.done ? <p class="ok">{state.done}</p> : null}
          {state.error ? <ErrorNote error={state.error} /> : null}
        </div>
      </Section>
    </div>
  );
}
