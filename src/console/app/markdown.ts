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

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  for (const attribute of ['href', 'src', 'xlink:href', 'action', 'formaction']) {
    const value = node.getAttribute(attribute);
    if (value !== null && !SAFE_URL.test(value.trim())) node.removeAttribute(attribute);
  }
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('rel', 'noopener noreferrer nofollow');
    node.setAttribute('target', '_blank');
  }
});

const marked = new Marked({ gfm: true, async: false });

/**
 * Markdown of an untrusted skill as safe HTML: parsed by marked, then sanitised by DOMPurify with no
 * script, style, event handler, form, frame, embedded object or inline style left, and no URL but
 * web, mail, anchor and relative ones. The page's CSP would stop what slipped through; this stops it
 * from being there at all.
 */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source) as string;
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
