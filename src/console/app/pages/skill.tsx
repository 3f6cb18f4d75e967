import { useCallback, useMemo } from 'preact/hooks';
import type { SkillUsage } from '../../../wire/types';
import { getJson, getText, type Scope, skillPath } from '../api';
import { ErrorNote, Loading, PageGate, Section, useAsync, Verdict } from '../components';
import { MarkdownView } from '../markdown-view';
import { scopeQuery, skillHref } from '../page-scope';
import { navigate } from '../router';
import { UsageChart } from '../usage-chart';
import { Files, filePath } from './files';
import { InstallPanel } from './install';
import { Attestation, DistTags, Frontmatter, ScanFindings, type SkillDetail, Versions } from './skill-parts';

interface SkillPageProps {
  scope: Scope;
  name: string;
  version: string | null;
  /** The file the viewer shows (from the address), or null. */
  file: string | null;
}

export function SkillPage({ scope, name, version, file }: SkillPageProps) {
  return (
    <PageGate title={name} need="read" to="see this skill">
      <Skill scope={scope} name={name} version={version} file={file} />
    </PageGate>
  );
}

function Skill({ scope, name, version, file }: SkillPageProps) {
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
    () => getJson<SkillUsage>(skillPath(scope, name, '/usage?days=30')),
    [name, scopeQuery(scope)],
  );
  // Links keep the address's version (none: latest), so following one never reloads the page.
  const fileRoute = useCallback(
    // The file viewer's headings are anchored `file-<slug>` (its MarkdownView's idPrefix).
    (path: string, anchor: string) =>
      `${skillHref(scope, name, { version, file: path })}${anchor ? `#file-${anchor}` : ''}`,
    [scopeQuery(scope), name, version],
  );
  const files = useMemo(() => new Set(detail.value?.files.map((entry) => entry.path)), [detail.value]);
  if (detail.error) return <ErrorNote error={detail.error} />;
  if (!detail.value) return <Loading />;
  const skill = detail.value;
  const pick = (v: string) => navigate(skillHref(scope, name, { version: v, file }));
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
      <Section title="Install / use">
        <InstallPanel scope={scope} name={skill.name} version={skill.version} />
      </Section>
      <Section title="SKILL.md">
        {body.error ? <ErrorNote error={body.error} /> : null}
        <MarkdownView
          source={body.value ?? ''}
          context={{ baseDir: '', files, fileHref: fileRoute, idPrefix: 'skill-md-' }}
          fileUrl={(path) => filePath(scope, skill.name, path, skill.version)}
          label="SKILL.md"
        />
      </Section>
      <Section title="Frontmatter">
        <Frontmatter frontmatter={skill.frontmatter} />
      </Section>
      <Section title="Files">
        <Files scope={scope} skill={skill} selected={file} fileRoute={fileRoute} />
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
