/**
 * Prose read out of a SKILL.md body when its frontmatter has no description (validate.ts): the text
 * under a heading named "Description", else the first paragraph, as plain text. Pure, and linear in
 * the body however hostile it is. Not marked's lexer: the CLI validates with this code too, in a
 * standalone bundle that carries no Markdown parser, and a description needs only the blocks.
 */

/** `# Description`, `## Description:` or `## **Description**` at any level, in any letter case. */
const DESCRIPTION_HEADING = /^ {0,3}#{1,6}[ \t]+(?:\*\*|__)?description(?:\*\*|__)?:?[ \t]*(?:#+[ \t]*)?$/i;
/** The same words as a setext heading's text (the next line being `===` or `---`). */
const DESCRIPTION_TEXT = /^ {0,3}(?:\*\*|__)?description(?:\*\*|__)?:?[ \t]*$/i;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Follows fenced code line by line: the returned function says whether a line opens, is inside or
 * closes a fence (read in order, each line once).
 */
function fenceTracker(): (line: string) => boolean {
  let fence: string | undefined;
  return (line) => {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker?.startsWith(fence)) fence = undefined;
      return true;
    }
    fence = marker;
    return marker !== undefined;
  };
}

/**
 * The prose under a heading named "Description" (any level, any letter case) up to the next heading,
 * as plain text with its paragraphs joined: what an author who wrote such a section means the
 * skill's description to be. Undefined when there is no such heading, or no prose under it.
 */
export function descriptionSection(markdown: string): string | undefined {
  const lines = markdown.replace(/\r\n?/g, '\n').replace(HTML_COMMENT, '').split('\n');
  const inCode = fenceTracker();
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at]!;
    if (inCode(line)) continue;
    let start: number | undefined;
    if (DESCRIPTION_HEADING.test(line)) start = at + 1;
    else if (DESCRIPTION_TEXT.test(line) && SETEXT_UNDERLINE.test(lines[at + 1] ?? '')) start = at + 2;
    if (start !== undefined) return proseText(sectionLines(lines, start));
  }
  return undefined;
}

/** The lines from `start` up to the next heading (ATX, or a line of text over `===` or `---`). */
function sectionLines(lines: readonly string[], start: number): string[] {
  const section: string[] = [];
  const inCode = fenceTracker();
  for (let at = start; at < lines.length; at++) {
    const line = lines[at]!;
    if (
      !inCode(line) &&
      (ATX_HEADING.test(line) || (line.trim() !== '' && SETEXT_UNDERLINE.test(lines[at + 1] ?? '')))
    ) {
      break;
    }
    section.push(line);
  }
  return section;
}

/** The prose blocks of the lines as one text, read only as far as a description can reach. */
function proseText(lines: readonly string[]): string | undefined {
  const texts: string[] = [];
  let length = 0;
  for (const block of proseBlocks(lines.join('\n'))) {
    const text = plainText(block);
    if (text === undefined) continue;
    texts.push(text);
    length += text.length + 1;
    if (length >= MAX_PARAGRAPH_SOURCE_CHARS) break;
  }
  return texts.length === 0 ? undefined : texts.join(' ');
}

/**
 * The first block of prose in Markdown, as plain text: headings, code, tables, rules, HTML comments
 * and lines without any letter or digit are skipped; inline Markdown markers are removed.
 */
export function firstParagraph(markdown: string): string | undefined {
  for (const block of proseBlocks(markdown)) {
    const text = plainText(block);
    if (text !== undefined) return text;
  }
  return undefined;
}

/** A block's lines as one line of plain text, or undefined when it holds no letter or digit. */
function plainText(block: string[]): string | undefined {
  const text = collapseWhitespace(clipBlock(block).map(stripInlineMarkdown).join(' '));
  return LETTER_OR_DIGIT.test(text) ? text : undefined;
}

function* proseBlocks(markdown: string): Generator<string[]> {
  let block: string[] = [];
  const inCode = fenceTracker();
  for (const line of markdown.replace(HTML_COMMENT, '').split('\n')) {
    if (inCode(line) || isNonProseLine(line)) {
      if (block.length > 0) yield block;
      block = [];
      continue;
    }
    block.push(line);
  }
  if (block.length > 0) yield block;
}
/**
 * The inline-Markdown patterns backtrack over the rest of a line for every unclosed `_`, `[` or `<`,
 * which is quadratic: a 300 KB line took over a minute. The description keeps at most 1024
 * characters, so a few KiB of the paragraph's source is all that is ever needed.
 */
const MAX_PARAGRAPH_SOURCE_CHARS = 4 * 1024;

function clipBlock(block: string[]): string[] {
  const clipped: string[] = [];
  let left = MAX_PARAGRAPH_SOURCE_CHARS;
  for (const line of block) {
    if (left <= 0) break;
    clipped.push(line.slice(0, left));
    left -= line.length + 1;
  }
  return clipped;
}

function isNonProseLine(line: string): boolean {
  const trimmed = line.trim();
  return (
    trimmed === '' ||
    /^#{1,6}(\s|$)/.test(trimmed) || // ATX heading
    /^(?:[-*_]\s*){3,}$/.test(trimmed) || // thematic break
    /^=+$/.test(trimmed) || // setext underline
    /^\|/.test(trimmed) || // table row
    /^ {4,}|^\t/.test(line) // indented code
  );
}

function stripInlineMarkdown(line: string): string {
  return line
    .trim()
    .replace(/^(?:>\s*)+/, '') // blockquote
    .replace(/^(?:[-*+]|\d+[.)])\s+/, '') // list marker
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // image -> alt text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // link -> its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/(\*\*|__|\*|_|~~|`)(?=\S)([\s\S]*?\S)\1/g, '$2'); // emphasis, code
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
