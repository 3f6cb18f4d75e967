import { useEffect, useMemo, useRef } from 'preact/hooks';
import { getBytes } from './api';
import { decoded } from './links';
import { type MarkdownContext, renderMarkdown } from './markdown';

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
};

/** The element a location's #fragment names, once it is on the page. */
export function scrollToHash(): boolean {
  if (!location.hash) return false;
  const target = document.getElementById(decoded(location.hash.slice(1)));
  target?.scrollIntoView({ block: 'start' });
  return target !== null;
}

/**
 * A skill's markdown document, sanitised (markdown.ts). Images of the bundle are fetched with the
 * session's token and shown from blob: URLs (the CSP allows those), so they show with
 * SKILLREG_READ_AUTH=true too and count as no agent's use.
 */
export function MarkdownView({
  source,
  context,
  fileUrl,
  label,
}: {
  source: string;
  context: MarkdownContext;
  /** The registry URL of a file of the version shown. */
  fileUrl: (path: string) => string;
  label: string;
}) {
  const container = useRef<HTMLDivElement>(null);
  const html = useMemo(
    () => renderMarkdown(source, context),
    [source, context.baseDir, context.idPrefix, context.files, context.fileHref],
  );
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let live = true;
    const urls: string[] = [];
    for (const image of element.querySelectorAll<HTMLImageElement>('img[data-skill-file]')) {
      const path = image.dataset.skillFile!;
      const type = IMAGE_TYPES[path.split('.').pop()?.toLowerCase() ?? ''];
      if (!type) {
        image.title = `${path}: not an image type the console shows`;
        continue;
      }
      getBytes(fileUrl(path)).then(
        (bytes) => {
          if (!live) return;
          const url = URL.createObjectURL(new Blob([bytes.slice()], { type }));
          urls.push(url);
          image.src = url;
        },
        (error: Error) => {
          if (live) image.title = `${path} could not be loaded: ${error.message}`;
        },
      );
    }
    scrollToHash();
    return () => {
      live = false;
      for (const url of urls) URL.revokeObjectURL(url);
    };
  }, [html]);
  return (
    // Sanitised: the body is the publisher's, not ours (see markdown.ts)
    <div
      class="markdown"
      ref={container}
      role="document"
      aria-label={label}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
