import { diffLines } from 'diff';
import { useState } from 'preact/hooks';
import type { SkillDetail } from '../../../client/types';
import { getBytes, getJson, type Scope, send, skillPath } from '../api';
import { checkAttestation } from '../attestation';
import { ErrorNote, Loading, Section, SignInNote, useAsync } from '../components';
import { writePrefix } from '../page-scope';
import { allows, useSession } from '../session';
import { decodeText, filePath } from './files';

export type { SkillDetail };

export function Frontmatter({ frontmatter }: { frontmatter: Record<string, unknown> }) {
  return (
    <dl class="frontmatter">
      {Object.entries(frontmatter).map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{typeof value === 'string' ? value : <code>{JSON.stringify(value)}</code>}</dd>
        </div>
      ))}
    </dl>
  );
}

async function versionFiles(scope: Scope, name: string, version: string) {
  return getJson<SkillDetail>(skillPath(scope, name, `?version=${encodeURIComponent(version)}`));
}

/** Per file: added, removed or changed, with a line diff of text files. */
async function compare(scope: Scope, name: string, from: string, to: string) {
  const [a, b] = await Promise.all([versionFiles(scope, name, from), versionFiles(scope, name, to)]);
  const before = new Map(a.files.map((f) => [f.path, f]));
  const after = new Map(b.files.map((f) => [f.path, f]));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes = [];
  for (const path of paths) {
    const x = before.get(path);
    const y = after.get(path);
    if (x && y && x.digest === y.digest) continue;
    const load = async (version: string, present: boolean) =>
      present ? decodeText(await getBytes(filePath(scope, name, path, version))) : '';
    const [left, right] = await Promise.all([load(from, x !== undefined), load(to, y !== undefined)]);
    const status = !x ? 'added' : !y ? 'removed' : 'changed';
    changes.push({
      path,
      status,
      parts: left === undefined || right === undefined ? null : diffLines(left, right),
    });
  }
  return changes;
}

export function Versions({ scope, skill }: { scope: Scope; skill: SkillDetail }) {
  const names = skill.versions.map((v) => v.version);
  const [from, setFrom] = useState(names[1] ?? names[0] ?? '');
  const [to, setTo] = useState(names[0] ?? '');
  const [asked, setAsked] = useState<[string, string] | null>(null);
  const diff = useAsync(
    async () => (asked ? compare(scope, skill.name, asked[0], asked[1]) : undefined),
    [asked?.join('|')],
  );
  return (
    <div>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Published</th>
            <th scope="col">Tags</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {skill.versions.map((v) => (
            <tr key={v.version}>
              <td>{v.version}</td>
              <td>{v.createdAt.replace('T', ' ').slice(0, 16)}</td>
              <td>{v.tags.join(', ')}</td>
              <td>{v.yanked ? 'yanked' : 'live'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          setAsked([from, to]);
        }}
      >
        <label class="inline">
          From{' '}
          <select
            aria-label="From"
            value={from}
            onChange={(e) => setFrom((e.target as HTMLSelectElement).value)}
          >
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        <label class="inline">
          To{' '}
          <select aria-label="To" value={to} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        <button type="submit">Compare</button>
      </form>
      {diff.error ? <ErrorNote error={diff.error} /> : null}
      {diff.loading && asked ? <Loading /> : null}
      {diff.value ? (
        diff.value.length === 0 ? (
          <p>No file differs.</p>
        ) : (
          diff.value.map((change) => (
            <figure key={change.path} class="diff">
              <figcaption>
                <code>{change.path}</code> <span class="badge">{change.status}</span>
              </figcaption>
              {change.parts ? (
                <pre class="code">
                  {change.parts.map((part, i) => (
                    <span key={i} class={part.added ? 'added' : part.removed ? 'removed' : 'same'}>
                      {part.value
                        .replace(/\n$/, '')
                        .split('\n')
                        .map((line) => `${part.added ? '+' : part.removed ? '-' : ' '} ${line}\n`)
                        .join('')}
                    </span>
                  ))}
                </pre>
              ) : (
                <p class="muted">binary file</p>
              )}
            </figure>
          ))
        )
      ) : null}
    </div>
  );
}

export function DistTags({ skill, onMoved }: { skill: SkillDetail; onMoved: () => void }) {
  const live = skill.versions.filter((v) => !v.yanked).map((v) => v.version);
  const [tag, setTag] = useState('latest');
  const [version, setVersion] = useState(live[0] ?? '');
  const [state, setState] = useState<{ busy?: boolean; error?: Error; done?: string }>({});
  const namespace = skill.resolvedFrom ?? skill.namespace;
  const session = useSession();
  const mayMove = allows(session, 'publish', { namespace: namespace ?? 'default' });
  return (
    <div>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Tag</th>
            <th scope="col">Version</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(skill.distTags).map(([name, v]) => (
            <tr key={name}>
              <td>{name}</td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {mayMove ? (
        <form
          class="toolbar"
          onSubmit={async (event) => {
            event.preventDefault();
            setState({ busy: true });
            try {
              await send(
                'PUT',
                `${writePrefix(namespace)}/skills/${encodeURIComponent(skill.name)}/tags/${encodeURIComponent(tag.trim())}`,
                {
                  version,
                },
              );
              setState({ done: `${tag.trim()} now points at ${version}` });
              onMoved();
            } catch (error) {
              setState({ error: error as Error });
            }
          }}
        >
          <label class="inline">
            Tag{' '}
            <input
              type="text"
              required
              size={10}
              value={tag}
              list="known-tags"
              onInput={(e) => setTag((e.target as HTMLInputElement).value)}
            />
          </label>
          <datalist id="known-tags">
            {Object.keys(skill.distTags).map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <label class="inline">
            Version{' '}
            <select value={version} onChange={(e) => setVersion((e.target as HTMLSelectElement).value)}>
              {live.map((v) => (
                <option key={v}>{v}</option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={state.busy}>
            Move tag
          </button>
        </form>
      ) : (
        <SignInNote need="publish" where={{ namespace: namespace ?? 'default' }} to="move dist-tags" />
      )}
      <div aria-live="polite">
        {state.done ? <p class="ok">{state.done}</p> : null}
        {state.error ? <ErrorNote error={state.error} /> : null}
      </div>
    </div>
  );
}

export function ScanFindings({ skill }: { skill: SkillDetail }) {
  if (!skill.scan)
    return <p class="muted">Stored before scanning existed: a rescan (POST /admin/rescan) scans it.</p>;
  return (
    <div>
      <p>
        Verdict <strong>{skill.scan.verdict}</strong> under rules <code>{skill.scan.rules}</code>
      </p>
      {skill.scan.findings.length === 0 ? (
        <p>No findings.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col">Rule</th>
              <th scope="col">Where</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {skill.scan.findings.map((f, i) => (
              <tr key={i}>
                <td>
                  <span class={`badge severity-${f.severity}`}>{f.severity}</span>
                </td>
                <td>
                  <code>{f.rule}</code>
                </td>
                <td>
                  <code>
                    {f.path}
                    {f.line > 0 ? `:${f.line}` : ''}
                  </code>
                </td>
                <td>{f.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function Attestation({ scope, skill }: { scope: Scope; skill: SkillDetail }) {
  const status = useAsync(
    () => checkAttestation(scope, skill.name, skill.version, skill.digest),
    [skill.name, skill.version],
  );
  if (status.loading) return <Loading />;
  if (status.error) return <ErrorNote error={status.error} />;
  const s = status.value!;
  return (
    <p class={s.state === 'verified' ? 'ok' : s.state === 'failed' ? 'bad' : 'muted'}>
      <strong>
        {s.state === 'verified'
          ? 'Signed and verified'
          : s.state === 'failed'
            ? 'Verification failed'
            : 'Not checked'}
      </strong>
      : {s.detail}
      {s.kid ? (
        <>
          {' '}
          (key <code>{s.kid.slice(0, 16)}…</code>
          {s.publisher ? `, published by ${s.publisher}` : ''})
        </>
      ) : null}
    </p>
  );
}

export { Section };
