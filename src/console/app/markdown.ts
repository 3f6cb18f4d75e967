import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';
import { fragmentAnchor, headingSlug, resolveLink } from './links';

for (const [name, language] of Object.entries({
  bash,
  css,
  go,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}

const LANGUAGE_OF_EXTENSION: Record<string, string> = {
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  css: 'css',
  go: 'go',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  json: 'json',
  md: 'markdown',
  markdown: 'markdown',
  py: 'python',
  rs: 'rust',
  sql: 'sql',
  ts: 'typescript',
  tsx: 'typescript',
  html: 'xml',
  xml: 'xml',
  svg: 'xml',
  yml: 'yaml',
  yaml: 'yaml',
};

/** Only links that leave for the web, mail, an anchor or a relative path; never script or data URLs. */
const SAFE_URL = /^(?:https?:|mailto:|#|\.{0,2}\/|[^:]*$)/i;

/** How the links and headings of one document are rewritten (see renderMarkdown). */
export interface MarkdownContext {
  /** The document's folder inside the bundle: '' for SKILL.md. */
  baseDir: string;
  /** Every file of the version shown. */
  files: ReadonlySet<string>;
  /** The console's address of a file of the same skill, version and scope, at a heading anchor or ''. */
  fileHref(path: string, anchor: string): string;
  /** Put before heading ids, so two documents on one page never share an anchor. */
  idPrefix: string;
}

/** The document being sanitised: DOMPurify's hooks are global, and sanitize() runs synchronously. */
let rendering: (MarkdownContext & { seen: Map<string, number> }) | null = null;

function rewriteLink(anchor: Element, context: MarkdownContext): void {
  const target = resolveLink(anchor.getAttribute('href')!, context.baseDir, context.files);
  anchor.removeAttribute('target');
  anchor.removeAttribute('rel');
  if (target.kind === 'external') {
    anchor.setAttribute('rel', 'noopener noreferrer nofollow');
    anchor.setAttribute('target', '_blank');
  } else if (target.kind === 'fragment') {
    anchor.setAttribute('href', `#${context.idPrefix}${fragmentAnchor(target.fragment)}`);
  } else if (target.kind === 'file') {
    // A console route: the router opens it in this tab, where the session token is.
    anchor.setAttribute('href', context.fileHref(target.path, fragmentAnchor(target.fragment)));
  } else {
    anchor.removeAttribute('href');
    anchor.setAttribute('class', 'link-inert');
    anchor.setAttribute('title', target.reason);
    anchor.setAttribute('data-inert', target.label);
  }
}

/**
 * The console's CSP lets images come from this origin only, and a file read with the session's token
 * counts as no agent's use: a bundled image is marked and loaded by the page (MarkdownView);
 * others keep their alt text.
 */
function rewriteImage(image: Element, context: MarkdownContext): void {
  const target = resolveLink(image.getAttribute('src')!, context.baseDir, context.files);
  image.removeAttribute('src');
  if (target.kind === 'file') {
    image.setAttribute('data-skill-file', target.path);
  } else {
    image.setAttribute('class', 'img-inert');
    image.setAttribute(
      'title',
      target.kind === 'external' ? `not loaded: images from other sites are not shown here` : 'not shown',
    );
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  for (const attribute of ['href', 'src', 'xlink:href', 'action', 'formaction']) {
    const value = node.getAttribute(attribute);
    if (value !== null && !SAFE_URL.test(value.trim())) node.removeAttribute(attribute);
  }
  const context = rendering;
  if (!context) return;
  const tag = node.tagName;
  if (tag === 'A' && node.hasAttribute('href')) rewriteLink(node, context);
  else if (tag === 'IMG' && node.hasAttribute('src')) rewriteImage(node, context);
  else if (/^H[1-6]$/.test(tag ?? '')) {
    node.setAttribute('id', `${context.idPrefix}${headingSlug(node.textContent ?? '', context.seen)}`);
  } else if (tag === 'TABLE' || tag === 'PRE') {
    // They scroll inside their own box when wide: reachable by keyboard too.
    node.setAttribute('tabindex', '0');
  }
});

const marked = new Marked({ gfm: true, async: false });

/**
 * Markdown of an untrusted skill as safe HTML: parsed by marked, then sanitised by DOMPurify with no
 * script, style, event handler, form, frame, embedded object or inline style left, and no URL but
 * web, mail, anchor and relative ones. The page's CSP would stop what slipped through; this stops it
 * from being there at all. Relative links become console routes to the skill's files (see links.ts),
 * headings get anchors.
 */
export function renderMarkdown(source: string, context: MarkdownContext): string {
  const html = marked.parse(source) as string;
  rendering = { ...context, seen: new Map() };
  try {
    return DOMPurify.sanitize(html, {
      USE_PROFILES: { html: true },
      FORBID_TAGS: [
        'style',
        'form',
        'input',
        'button',
        'textarea',
        'select',
        'iframe',
        'object',
        'embed',
        'link',
        'meta',
        'base',
      ],
      FORBID_ATTR: ['style', 'srcset', 'formaction', 'action'],
      ALLOW_DATA_ATTR: false,
    });
  } finally {
    rendering = null;
  }
}

/** Highlighted HTML of a text file (highlight.js escapes everything it does not mark up). */
export function highlight(path: string, text: string): string {
  const extension = path.split('.').pop()?.toLowerCase() ?? '';
  const language = LANGUAGE_OF_EXTENSION[extension];
  if (language) return hljs.highlight(text, { language, ignoreIllegals: true }).value;
  const escaped = document.createElement('div');
  escaped.textContent = text;
  return escaped.innerHTML;
}
