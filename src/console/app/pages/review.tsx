import { useState } from 'preact/hooks';
import { AUDIT_ACTIONS } from '../../../domain/audit-actions';
import type {
  AuditPage as AuditAnswer,
  QuarantinedVersion,
  QuarantineList,
  ReviewBody,
  ScopeUsage,
} from '../../../wire/types';
import { getJson, type Scope, scopePrefix, send } from '../api';
import {
  ErrorNote,
  formatDate,
  Loading,
  PageGate,
  ReadsNeedTokenNote,
  SignInNote,
  useAsync,
} from '../components';
import { writePrefix } from '../page-scope';
import { allows, useSession } from '../session';
import { ScopePicker, useScopes } from './catalogue';

const ACTIONS = ['', ...AUDIT_ACTIONS];

/** The audit log with the filters GET /audit takes, a page at a time. */
export function AuditPage() {
  return (
    <PageGate title="Audit log" need="admin" to="see the audit log">
      <Audit />
    </PageGate>
  );
}

function Audit() {
  const [filters, setFilters] = useState({
    actor: '',
    action: '',
    namespace: '',
    skill: '',
    since: '',
    until: '',
  });
  const [applied, setApplied] = useState(filters);
  const [cursor, setCursor] = useState<string | null>(null);
  const page = useAsync(async () => {
    const params = new URLSearchParams({ limit: '50' });
    for (const [key, value] of Object.entries(applied)) {
      if (value.trim())
        params.set(key, key === 'since' || key === 'until' ? new Date(value).toISOString() : value.trim());
    }
    if (cursor) params.set('cursor', cursor);
    return getJson<AuditAnswer>(`/audit?${params}`);
  }, [JSON.stringify(applied), cursor]);
  const field = (key: keyof typeof filters, label: string, type: 'text' | 'datetime-local' = 'text') => (
    <label class="inline">
      {label}{' '}
      <input
        type={type as 'text'}
        value={filters[key]}
        onInput={(e) => setFilters({ ...filters, [key]: (e.target as HTMLInputElement).value })}
      />
    </label>
  );
  return (
    <div>
      <h1>Audit log</h1>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(null);
          setApplied(filters);
        }}
      >
        {field('actor', 'Actor')}
        <label class="inline">
          Action{' '}
          <select
            value={filters.action}
            onChange={(e) => setFilters({ ...filters, action: (e.target as HTMLSelectElement).value })}
          >
            {ACTIONS.map((action) => (
              <option key={action} value={action}>
                {action || 'any'}
              </option>
            ))}
          </select>
        </label>
        {field('namespace', 'Namespace')}
        {field('skill', 'Skill')}
        {field('since', 'Since', 'datetime-local')}
        {field('until', 'Until', 'datetime-local')}
        <button type="submit">Filter</button>
      </form>
      {page.error ? <ErrorNote error={page.error} /> : null}
      {page.loading ? <Loading /> : null}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Skill</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {page.value?.items.map((entry) => (
            <tr key={entry.id}>
              <td>{formatDate(entry.at)}</td>
              <td>{entry.actor}</td>
              <td>{entry.action}</td>
              <td>
                {entry.namespace && entry.namespace !== 'default' ? `${entry.namespace}/` : ''}
                {entry.skill ?? ''}
                {entry.version ? `@${entry.version}` : ''}
              </td>
              <td>
                <code class="small">{JSON.stringify(entry.detail)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.value?.nextCursor ? (
        <button type="button" onClick={() => setCursor(page.value!.nextCursor)}>
          Older entries
        </button>
      ) : null}
    </div>
  );
}

/** Versions the scan blocked: their findings, and release or reject with a reason (audited). */
export function QuarantinePage() {
  return (
    <PageGate title="Quarantine" need="admin" to="review the quarantine">
      <Quarantine />
    </PageGate>
  );
}

function Quarantine() {
  const [state, setState] = useState<'held' | 'rejected'>('held');
  const list = useAsync(() => getJson<QuarantineList>(`/quarantine?state=${state}`), [state]);
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<{ error?: Error; done?: string }>({});
  const review = async (item: QuarantinedVersion, decision: ReviewBody['decision']) => {
    const key = `${item.namespace}/${item.name}@${item.version}`;
    try {
      await send(
        'POST',
        `${writePrefix(item.namespace)}/skills/${encodeURIComponent(item.name)}/versions/${encodeURIComponent(item.version)}/review`,
        { decision, reason: (reasons[key] ?? '').trim() } satisfies ReviewBody,
      );
      setOutcome({ done: `${key}: ${decision === 'release' ? 'released' : 'rejected'}` });
      list.reload();
    } catch (error) {
      setOutcome({ error: error as Error });
    }
  };
  return (
    <div>
      <h1>Quarantine</h1>
      <label class="inline">
        Show{' '}
        <select
          value={state}
          onChange={(e) => setState((e.target as HTMLSelectElement).value as 'held' | 'rejected')}
        >
          <option value="held">held for review</option>
          <option value="rejected">rejected</option>
        </select>
      </label>
      <div aria-live="polite">
        {outcome.done ? <p class="ok">{outcome.done}</p> : null}
        {outcome.error ? <ErrorNote error={outcome.error} /> : null}
      </div>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.loading ? <Loading /> : null}
      {list.value?.items.length === 0 ? <p>Nothing here.</p> : null}
      {list.value?.items.map((item) => {
        const key = `${item.namespace}/${item.name}@${item.version}`;
        return (
          <article class="card" key={key} aria-label={key}>
            <h2>{key}</h2>
            <p class="muted">
              published by {item.publishedBy} at {formatDate(item.createdAt)}
            </p>
            <ul>
              {item.scan?.findings.map((f, i) => (
                <li key={i}>
                  <span class={`badge severity-${f.severity}`}>{f.severity}</span> <code>{f.rule}</code>{' '}
                  <code>
                    {f.path}
                    {f.line > 0 ? `:${f.line}` : ''}
                  </code>
                  : {f.detail}
                </li>
              ))}
            </ul>
            {state === 'held' ? (
              <form class="toolbar" onSubmit={(e) => e.preventDefault()}>
                <label class="inline grow">
                  Reason{' '}
                  <input
                    type="text"
                    required
                    value={reasons[key] ?? ''}
                    onInput={(e) => setReasons({ ...reasons, [key]: (e.target as HTMLInputElement).value })}
                  />
                </label>
                <button
                  type="button"
                  disabled={!(reasons[key] ?? '').trim()}
                  onClick={() => review(item, 'release')}
                >
                  Release
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={!(reasons[key] ?? '').trim()}
                  onClick={() => review(item, 'reject')}
                >
                  Reject
                </button>
              </form>
            ) : null}
          </article>
        );
      })}
    </div>
  );
}

/** Top skills and the skills no agent loaded, over a window. */
export function UsagePage({ scope }: { scope: Scope }) {
  const session = useSession();
  if (!allows(session, 'read', scope.kind === 'namespace' ? { namespace: scope.name } : 'any-namespace')) {
    return (
      <div>
        <h1>Usage</h1>
        {session.state === 'signed-in' ? (
          <SignInNote
            need="read"
            where={{ namespace: scope.kind === 'namespace' ? scope.name : 'default' }}
            to="see usage here"
          />
        ) : (
          <ReadsNeedTokenNote to="see usage" />
        )}
      </div>
    );
  }
  return <Usage scope={scope} />;
}

function Usage({ scope }: { scope: Scope }) {
  const known = useScopes();
  const [days, setDays] = useState(30);
  const usage = useAsync(
    () => getJson<ScopeUsage>(`${scopePrefix(scope)}/usage?days=${days}&limit=50`),
    [JSON.stringify(scope), days],
  );
  return (
    <div>
      <h1>Usage</h1>
      <div class="toolbar">
        <ScopePicker scope={scope} path="/ui/usage" known={known.value} />
        <label class="inline">
          Window{' '}
          <select
            value={String(days)}
            onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}
          >
            {[1, 7, 30, 90].map((n) => (
              <option key={n} value={String(n)}>
                {n} day{n === 1 ? '' : 's'}
              </option>
            ))}
          </select>
        </label>
      </div>
      {usage.error ? <ErrorNote error={usage.error} /> : null}
      {usage.loading ? <Loading /> : null}
      {usage.value ? (
        <>
          <h2>
            Most used ({usage.value.used} used from {usage.value.from} to {usage.value.to})
          </h2>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Skill</th>
                <th scope="col">Loads</th>
                <th scope="col">File reads</th>
                <th scope="col">Downloads</th>
                <th scope="col">Last loaded</th>
              </tr>
            </thead>
            <tbody>
              {usage.value.top.map((entry) => (
                <tr key={`${entry.namespace}/${entry.name}`}>
                  <td>
                    {entry.namespace !== 'default' ? `${entry.namespace}/` : ''}
                    {entry.name}
                  </td>
                  <td>{entry.loads}</td>
                  <td>{entry.files}</td>
                  <td>{entry.downloads}</td>
                  <td>{formatDate(entry.lastLoadedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Never loaded ({usage.value.neverLoadedCount})</h2>
          <ul class="columns">
            {usage.value.neverLoaded.map((entry) => (
              <li key={`${entry.namespace}/${entry.name}`}>
                {entry.namespace !== 'default' ? `${entry.namespace}/` : ''}
                {entry.name}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
