import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { SkillDetail } from '../../../client/types';
import { getBytes, type Scope, skillPath } from '../api';
import { ErrorNote, formatBytes, Loading, useAsync } from '../components';
import { folderOf } from '../links';
import { highlight, type MarkdownContext } from '../markdown';
import { MarkdownView } from '../markdown-view';

/** The registry's URL of one file of a version. */
export function filePath(scope: Scope, name: string, path: string, version: string): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return skillPath(scope, name, `/files/${encoded}?version=${encodeURIComponent(version)}`);
}

const IMAGE = /\.(png|jpe?g|gif|webp)$/i;
const MARKDOWN = /\.(md|markdown)$/i;

export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The file tree and viewer. The file shown is the page's address (`/ui/skills/<name>/files/<path>`),
 * so links to a file (from the tree or a rendered document) are console routes in this tab.
 */
export function Files({
  scope,
  skill,
  selected,
  fileRoute,
}: {
  scope: Scope;
  skill: SkillDetail;
  selected: string | null;
  /** The console's address of a file of this skill, version and scope, at a heading anchor or ''. */
  fileRoute: (path: string, anchor: string) => string;
}) {
  const viewer = useRef<HTMLElement>(null);
  const file = useAsync(async () => {
    if (!selected) return undefined;
    const bytes = await getBytes(filePath(scope, skill.name, selected, skill.version));
    return { path: selected, bytes, text: decodeText(bytes) };
  }, [selected, skill.version]);
  const files = useMemo(() => new Set(skill.files.map((entry) => entry.path)), [skill.files]);
  // A file opened from a link: bring the viewer into sight (a #heading scrolls itself once rendered).
  useEffect(() => {
    if (!selected || !viewer.current) return;
    viewer.current.focus({ preventScroll: true });
    if (!location.hash) viewer.current.scrollIntoView({ block: 'start' });
  }, [selected]);
  const known = selected === null || files.has(selected);
  return (
    <div class="files">
      <ul class="tree" aria-label="Files">
        {skill.files.map((entry) => (
          <li key={entry.path}>
            <a
              href={fileRoute(entry.path, '')}
              class={`depth-${Math.min(entry.path.split('/').length - 1, 6)}`}
              aria-current={selected === entry.path ? 'true' : undefined}
            >
              {entry.path}
            </a>{' '}
            <span class="muted small">{formatBytes(entry.size)}</span>
          </li>
        ))}
      </ul>
      <section class="viewer" aria-live="polite" tabIndex={-1} ref={viewer} aria-label="File viewer">
        {!selected ? <p class="muted">Choose a file to view it.</p> : null}
        {!known ? (
          <p class="error" role="alert">
            {selected} is not a file of version {skill.version}.
          </p>
        ) : null}
        {known && file.loading && selected ? <Loading /> : null}
        {file.error ? <ErrorNote error={file.error} /> : null}
        {known && file.value ? (
          <FileView
            key={file.value.path}
            path={file.value.path}
            bytes={file.value.bytes}
            text={file.value.text}
            markdown={{
              baseDir: folderOf(file.value.path),
              files,
              fileHref: fileRoute,
              idPrefix: 'file-',
            }}
            fileUrl={(path) => filePath(scope, skill.name, path, skill.version)}
          />
        ) : null}
      </section>
    </div>
  );
}

function FileView({
  path,
  bytes,
  text,
  markdown,
  fileUrl,
}: {
  path: string;
  bytes: Uint8Array;
  text: string | undefined;
  markdown: MarkdownContext;
  fileUrl: (path: string) => string;
}) {
  const [source, setSource] = useState(false);
  const image = useMemo(
    () => (IMAGE.test(path) ? URL.createObjectURL(new Blob([bytes.slice()])) : undefined),
    [path, bytes],
  );
  useEffect(() => () => image && URL.revokeObjectURL(image), [image]);
  if (image) return <img src={image} alt={`${path} (bundled image)`} class="preview" />;
  if (text === undefined)
    return (
      <p>
        {path}: binary, {formatBytes(bytes.length)}; not shown.
      </p>
    );
  const rendered = MARKDOWN.test(path) && !source;
  return (
    <figure>
      <figcaption>
        <code>{path}</code>{' '}
        {MARKDOWN.test(path) ? (
          <button type="button" class="link" aria-pressed={source} onClick={() => setSource(!source)}>
            {source ? 'Show rendered' : 'Show source'}
          </button>
        ) : null}
      </figcaption>
      {rendered ? (
        <MarkdownView source={text} context={markdown} fileUrl={fileUrl} label={`File ${path}`} />
      ) : (
        // highlight.js escapes the file's text; only its own spans are markup. Long lines scroll
        // inside the box, which the keyboard must reach too.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is focusable so it can be scrolled
        <pre class="code" tabIndex={0}>
          <code dangerouslySetInnerHTML={{ __html: highlight(path, text) }} />
        </pre>
      )}
    </figure>
  );
}
