import { getJson, getText, type Scope, skillPath } from '../api';
import { ErrorNote, Loading, Section, useAsync, Verdict } from '../components';
import { renderMarkdown } from '../markdown';
import { navigate } from '../router';
import { scopeQuery } from '../scope';
import { UsageChart, type UsageDay } from '../usage-chart';
import {
  Attestation,
  DistTags,
  Files,
  Frontmatter,
  ScanFindings,
  type SkillDetail,
  Versions,
} from './skill-parts';

export function SkillPage({ scope, name, version }: { scope: Scope; name: string; version: string | null }) {
  const selector = version ? `?version=${encodeURIComponent(version)}` : '';
  const detail = useAsync(
    () => getJson<SkillDetail>(skillPath(scope, name, selector)),
    [name, version, scopeQuery(scope)],
  );
  const body = useAsync(
    async () =>
      detail.value
        ? getText(skillPath(scope, name, `/content?version=${encodeURIComponent(detail.value.version)}`))
        : '',
    [detail.value?.version, detail.value?.digest],
  );
  const usage = useAsync(
    () => getJson<{ days: UsageDay[] }>(skillPath(scope, name, '/usage?days=30')),
    [name, scopeQuery(scope)],
  );
  if (detail.error) return <ErrorNote error={detail.error} />;
  if (!detail.value) return <Loading />;
  const skill = detail.value;
  const pick = (v: string) => {
    const params = new URLSearchParams(location.search);
    params.set('version', v);
    navigate(`/ui/skills/${encodeURIComponent(name)}?${params}`);
  };
  return (
    <article>
      <header class="skill-header">
        <h1>{skill.name}</h1>
        <p>{skill.description}</p>
        <p class="muted">
          <label class="inline">
            Version{' '}
            <select value={skill.version} onChange={(e) => pick((e.target as HTMLSelectElement).value)}>
              {skill.versions.map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                  {v.tags.length ? ` (${v.tags.join(', ')})` : ''}
                  {v.yanked ? ' yanked' : ''}
                </option>
              ))}
            </select>
          </label>{' '}
          namespace {skill.resolvedFrom ?? skill.namespace ?? 'default'} ·{' '}
          <Verdict verdict={skill.scan?.verdict} /> · <code>{skill.digest.slice(0, 19)}…</code>
        </p>
      </header>
      <Section title="SKILL.md">
        {body.error ? <ErrorNote error={body.error} /> : null}
        {/* Sanitised: the body is the publisher's, not ours (see markdown.ts) */}
        <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(body.value ?? '') }} />
      </Section>
      <Section title="Frontmatter">
        <Frontmatter frontmatter={skill.frontmatter} />
      </Section>
      <Section title="Files">
        <Files scope={scope} skill={skill} />
      </Section>
      <Section title="Versions">
        <Versions scope={scope} skill={skill} />
      </Section>
      <Section title="Dist-tags">
        <DistTags skill={skill} onMoved={detail.reload} />
      </Section>
      <Section title="Scan">
        <ScanFindings skill={skill} />
      </Section>
      <Section title="Attestation">
        <Attestation scope={scope} skill={skill} />
      </Section>
      <Section title="Usage">
        {usage.error ? <ErrorNote error={usage.error} /> : null}
        {usage.value ? <UsageChart days={usage.value.days} /> : null}
      </Section>
    </article>
  );
}
