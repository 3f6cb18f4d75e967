import { useEffect, useState } from 'preact/hooks';
import type { CatalogueItem } from '../../../client/types';
import { getJson, type Scope, scopePrefix } from '../api';
import { ErrorNote, Loading, useAsync, Verdict } from '../components';
import { navigate } from '../router';
import { skillHref } from '../scope';

interface Scopes {
  namespaces: string[];
  views: string[];
}

async function scopes(): Promise<Scopes> {
  const [namespaces, views] = await Promise.all([
    getJson<{ items: { name: string }[] }>('/namespaces'),
    getJson<{ items: { name: string }[] }>('/views'),
  ]);
  return { namespaces: namespaces.items.map((n) => n.name), views: views.items.map((v) => v.name) };
}

function scopeValue(scope: Scope): string {
  return scope.kind === 'root' ? 'ns:default' : `${scope.kind === 'view' ? 'view' : 'ns'}:${scope.name}`;
}

export function ScopePicker({ scope, path }: { scope: Scope; path: string }) {
  const known = useAsync(scopes, []);
  const onChange = (value: string) => {
    const [kind, name] = value.split(/:(.*)/s) as [string, string];
    const query =
      kind === 'view'
        ? `view=${encodeURIComponent(name)}`
        : name === 'default'
          ? ''
          : `ns=${encodeURIComponent(name)}`;
    navigate(`${path}${query ? `?${query}` : ''}`);
  };
  return (
    <label class="inline">
      Namespace or view{' '}
      <select value={scopeValue(scope)} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="ns:default">default</option>
        {known.value?.namespaces
          .filter((name) => name !== 'default')
          .map((name) => (
            <option key={`ns:${name}`} value={`ns:${name}`}>
              {name}
            </option>
          ))}
        {known.value?.views.map((name) => (
          <option key={`view:${name}`} value={`view:${name}`}>
            view: {name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function CataloguePage({ scope }: { scope: Scope }) {
  const [query, setQuery] = useState('');
  const [debounced, setDebounced] = useState('');
  const [tag, setTag] = useState('');
  const [verdict, setVerdict] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(query.trim()), 150);
    return () => clearTimeout(timer);
  }, [query]);
  const items = useAsync(async () => {
    const params = new URLSearchParams({ limit: '200' });
    if (debounced) params.set('q', debounced);
    if (tag.trim()) params.set('tag', tag.trim());
    return (await getJson<{ items: CatalogueItem[] }>(`${scopePrefix(scope)}/skills?${params}`)).items;
  }, [scopeValue(scope), debounced, tag]);
  const shown = (items.value ?? []).filter(
    (item) => !verdict || (item.scan?.verdict ?? 'unscanned') === verdict,
  );
  return (
    <div>
      <h1>Catalogue</h1>
      <div class="toolbar">
        <ScopePicker scope={scope} path="/ui" />
        <label class="inline grow">
          Search{' '}
          <input
            type="search"
            value={query}
            placeholder="describe a task, e.g. turn CSVs into a slide deck"
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="inline">
          Tag{' '}
          <input
            type="text"
            size={8}
            value={tag}
            placeholder="latest"
            onChange={(e) => setTag((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="inline">
          Scan{' '}
          <select value={verdict} onChange={(e) => setVerdict((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            <option value="pass">pass</option>
            <option value="warn">warn</option>
            <option value="unscanned">unscanned</option>
          </select>
        </label>
      </div>
      {items.error ? <ErrorNote error={items.error} /> : null}
      {items.loading && !items.value ? <Loading /> : null}
      <p class="muted" aria-live="polite">
        {items.value
          ? `${shown.length} skill${shown.length === 1 ? '' : 's'}${debounced ? ', best match first' : ''}`
          : ''}
      </p>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col">Description</th>
            <th scope="col">Version</th>
            <th scope="col">Scan</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((item) => (
            <tr key={`${item.namespace ?? ''}/${item.name}`}>
              <td>
                <a href={skillHref(scope, item.name)}>{item.name}</a>
                {item.namespace ? <div class="muted small">{item.namespace}</div> : null}
              </td>
              <td>{item.description}</td>
              <td>
                {item.version}
                {item.tags.length > 0 ? <div class="muted small">{item.tags.join(', ')}</div> : null}
              </td>
              <td>
                <Verdict verdict={item.scan?.verdict} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
