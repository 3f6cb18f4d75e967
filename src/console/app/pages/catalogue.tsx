import { useEffect, useState } from 'preact/hooks';
// The wire's CataloguePage is the answer; CataloguePage here is the page that shows it.
import type { CataloguePage as CatalogueAnswer, NamespaceList, ViewList } from '../../../wire/types';
import { getJson, type Scope, scopePrefix } from '../api';
import { ErrorNote, Loading, PageGate, useAsync, Verdict } from '../components';
import { skillHref } from '../page-scope';
import { navigate } from '../router';

interface Scopes {
  /** Each namespace with its count of current skills. */
  namespaces: { name: string; skills: number }[];
  views: string[];
}

/** The namespaces and views there are, for a ScopePicker. */
export function useScopes() {
  return useAsync(scopes, []);
}

async function scopes(): Promise<Scopes> {
  const [namespaces, views] = await Promise.all([
    getJson<NamespaceList>('/namespaces'),
    getJson<ViewList>('/views'),
  ]);
  return {
    namespaces: namespaces.items.map(({ name, skills }) => ({ name, skills })),
    views: views.items.map((v) => v.name),
  };
}

function scopeValue(scope: Scope): string {
  return scope.kind === 'root' ? 'ns:default' : `${scope.kind === 'view' ? 'view' : 'ns'}:${scope.name}`;
}

export function ScopePicker({
  scope,
  path,
  known,
}: {
  scope: Scope;
  path: string;
  /** From useScopes(); undefined while it loads. */
  known: Scopes | undefined;
}) {
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
        {known?.namespaces
          .filter(({ name }) => name !== 'default')
          .map(({ name }) => (
            <option key={`ns:${name}`} value={`ns:${name}`}>
              {name}
            </option>
          ))}
        {known?.views.map((name) => (
          <option key={`view:${name}`} value={`view:${name}`}>
            view: {name}
          </option>
        ))}
      </select>
    </label>
  );
}

const PAGE_SIZE = 50;

function plural(n: number, word = 'skill'): string {
  return `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * How many skills there are, said as exactly as the API allows: a search answers its best matches a
 * page at a time (no total), a namespace's count comes from GET /namespaces, a view's only from
 * listing it to the end.
 */
function countLine(options: {
  scope: Scope;
  query: string;
  tag: string;
  listed: number;
  more: boolean;
  catalogueSize: number | undefined;
}): string {
  const { scope, query, tag, listed, more, catalogueSize } = options;
  if (query) {
    return more
      ? `The best ${plural(listed)} matching “${query}”, best first; more match (show more, or add words to narrow it)`
      : `${plural(listed)} match “${query}”, best first`;
  }
  const where =
    scope.kind === 'view'
      ? `view ${scope.name}`
      : `namespace ${scope.kind === 'root' ? 'default' : scope.name}`;
  if (tag) return `${plural(listed)}${more ? ' (and more)' : ''} tagged ${tag} in ${where}`;
  const count = catalogueSize ?? (more ? undefined : listed);
  if (count === undefined) return `The first ${plural(listed)} of ${where}, by name`;
  return `${plural(count)} in ${where}${count > listed ? `; the first ${listed} shown, by name` : ''}`;
}

export function CataloguePage({ scope }: { scope: Scope }) {
  return (
    <PageGate title="Catalogue" need="read" to="see the catalogue">
      <Catalogue scope={scope} />
    </PageGate>
  );
}

function Catalogue({ scope }: { scope: Scope }) {
  const [query, setQuery] = useState('');
  const [debounced, setDebounced] = useState('');
  const [tag, setTag] = useState('');
  const [verdict, setVerdict] = useState('');
  const [later, setLater] = useState<CatalogueAnswer | null>(null);
  const [loadingMore, setLoadingMore] = useState<{ error?: Error; busy?: boolean }>({});
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(query.trim()), 150);
    return () => clearTimeout(timer);
  }, [query]);
  const known = useScopes();
  const fetchPage = (cursor: string | null) => {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (debounced) params.set('q', debounced);
    if (tag.trim()) params.set('tag', tag.trim());
    if (cursor) params.set('cursor', cursor);
    return getJson<CatalogueAnswer>(`${scopePrefix(scope)}/skills?${params}`);
  };
  const first = useAsync(() => {
    setLater(null);
    setLoadingMore({});
    return fetchPage(null);
  }, [scopeValue(scope), debounced, tag]);
  const items = [...(first.value?.items ?? []), ...(later?.items ?? [])];
  const nextCursor = later ? later.nextCursor : (first.value?.nextCursor ?? null);
  const showMore = async () => {
    setLoadingMore({ busy: true });
    try {
      const page = await fetchPage(nextCursor);
      setLater({ items: [...(later?.items ?? []), ...page.items], nextCursor: page.nextCursor });
      setLoadingMore({});
    } catch (error) {
      setLoadingMore({ error: error as Error });
    }
  };
  const shown = items.filter((item) => !verdict || (item.scan?.verdict ?? 'unscanned') === verdict);
  const namespace = scope.kind === 'root' ? 'default' : scope.kind === 'namespace' ? scope.name : undefined;
  const catalogueSize = known.value?.namespaces.find((ns) => ns.name === namespace)?.skills;
  return (
    <div>
      <h1>Catalogue</h1>
      <div class="toolbar">
        <ScopePicker scope={scope} path="/ui" known={known.value} />
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
      {first.error ? <ErrorNote error={first.error} /> : null}
      {first.loading && !first.value ? <Loading /> : null}
      <p class="muted count" aria-live="polite">
        {first.value && !first.loading
          ? `${countLine({
              scope,
              query: debounced,
              tag: tag.trim(),
              listed: items.length,
              more: nextCursor !== null,
              catalogueSize: tag.trim() ? undefined : catalogueSize,
            })}${verdict ? `; ${shown.length} of them with scan verdict ${verdict}` : ''}`
          : ''}
      </p>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col">{debounced ? 'Description, and why it matched' : 'Description'}</th>
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
              <td>
                {item.description}
                {item.match ? <div class="why small">Matched: {item.match.why}</div> : null}
              </td>
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
      {loadingMore.error ? <ErrorNote error={loadingMore.error} /> : null}
      {nextCursor !== null && first.value ? (
        <button type="button" onClick={showMore} disabled={loadingMore.busy}>
          Show more
        </button>
      ) : null}
    </div>
  );
}
