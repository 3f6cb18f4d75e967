import { promptColumnsOf } from './prompt-columns.js';
import { countsOf } from './prompt-memo.js';
import {
  descriptionOf,
  emptyMarkdown,
  fragmentHead,
  OMITTED_PREFIX,
  oneLine,
  renderEntry,
  unlistedLine,
  XML_LIST_END,
} from './prompt-render.js';
import type { PromptEntryTokens, PromptOptions, PromptSkill } from './prompt-types.js';
import type { Slicer } from './slicer.js';
import { countTokens } from './token-count.js';
import { escapeXmlText } from './xml.js';

// ---------------------------------------------------------------------------------------------------
// Token counts without tokenizing the catalogue on every rendering
//
// o200k never merges across the points token-count.ts's isCleanCut describes, nor between the letters
// or digits that end a word and the `/`, `,` or `.` that follows (a pre-token of letters or digits
// takes no punctuation after it but an apostrophe). The fragment is therefore cut into parts at such
// points, and its count is the sum of theirs: the instructions, each entry, the closing lines. An
// entry is cut further, so the parts that depend on the skill (name, description) are counted once
// per version and remembered, and the parts that depend on the request (base URL, tag) once per
// rendering:
//   xml       `<skill>\n` | `<name>N</name>\n` | `<description>D</description>\n` |
//             `<location>BASE/skills` | `/N` | `/content?tag=T</location>\n` | `</skill>\n`
//   markdown  `- **N**:` | ` D` | ` (location: BASE/skills` | `/N` | `/content?tag=T)\n`
// That holds for the names the registry accepts (a-z, 0-9, inner hyphens); any other entry is counted
// whole. The omitted line is `Also available ... (load them by name):` | ` N1` | `,` | ` N2` ... | `.\n`
// (the line counting them instead is counted whole). Markdown puts a blank line between the last
// entry and that line, and `)\n\n` is one pre-token: the last entry is counted with it. test/render/prompt-tokens.test.ts checks the sums
// against whole counts over a corpus of real skills.

/** Names whose entries split as above: what the registry accepts as a skill name. */
const PLAIN_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A markdown entry's description part is ` D`: with a blank description there is no such part. */
const NOT_BLANK = /\S/;

function xmlPartTokens(name: string, description: string): number {
  return (
    countTokens(`<name>${name}</name>\n`) +
    countTokens(`<description>${escapeXmlText(description)}</description>\n`) +
    countTokens(`/${name}`)
  );
}

function markdownPartTokens(name: string, description: string): number {
  return countTokens(`- **${name}**:`) + countTokens(` ${oneLine(description)}`) + countTokens(`/${name}`);
}

/**
 * Every count of a skill's own entry parts, computed once per version at publish and stored with it,
 * so no rendering ever tokenizes that version (a new process's first prompt would otherwise count
 * every entry of the catalogue). Null for a name the parts do not split (counted whole instead).
 */
export function promptEntryTokens(name: string, description: string): PromptEntryTokens | null {
  if (!PLAIN_NAME.test(name)) return null;
  return {
    xml: xmlPartTokens(name, description),
    markdown: NOT_BLANK.test(description) ? markdownPartTokens(name, description) : -1,
    listed: countTokens(` ${name}`),
  };
}

/** An entry of a rendering: its index in the skills and its tokens. */
export interface CountedEntry {
  index: number;
  tokens: number;
}

/** The fixed parts of a fragment that depend on its instructions (list or search-first). */
interface HeadTokens {
  /** The instructions and what comes before the first entry, as fragmentHead() writes them. */
  head: number;
  /** markdown: the placeholder when no skill is listed, alone and before the omitted line. */
  empty: number;
  emptyBeforeOmitted: number;
}

/** Per-rendering constants: the parts of the fragment that do not depend on the skills. */
export class Layout {
  /** Tokens of the fixed parts of an entry (see above). */
  readonly entryFixed: number;
  /** xml: `</available_skills>\n`. */
  readonly closeTokens: number;
  /** markdown: what the blank line adds to the last entry before the omitted line. */
  readonly lastEntryNewline: number;

  /**
   * The remembered counts of skills counted in parts without stored counts, by index (null: counted
   * whole). Skills with stored counts, nearly all, are not held here: their counts are read again.
   */
  private readonly counted = new Map<number, PromptEntryTokens | null>();
  /** newlineAfter of entries counted whole, by index. */
  private readonly newlineAdded = new Map<number, number>();
  /** HeadTokens of the list and the search-first fragment, counted when first needed. */
  private readonly heads: [HeadTokens | undefined, HeadTokens | undefined] = [undefined, undefined];

  constructor(
    readonly options: PromptOptions,
    readonly skills: readonly PromptSkill[],
  ) {
    const { style, baseUrl, tag } = options;
    const query = tag && tag !== 'latest' ? `?tag=${encodeURIComponent(tag)}` : '';
    if (style === 'markdown') {
      const end = `/content${query})\n`;
      this.entryFixed = countTokens(` (location: ${baseUrl}/skills`) + countTokens(end);
      this.closeTokens = 0;
      this.lastEntryNewline = countTokens(`${end}\n`) - countTokens(end);
    } else {
      this.entryFixed =
        countTokens('<skill>\n') +
        countTokens(`<location>${escapeXmlText(baseUrl)}/skills`) +
        countTokens(`/content${escapeXmlText(query)}</location>\n`) +
        countTokens('</skill>\n');
      this.closeTokens = countTokens(XML_LIST_END);
      this.lastEntryNewline = 0;
    }
  }

  private headsOf(searchFirst: boolean): HeadTokens {
    const at = searchFirst ? 1 : 0;
    const known = this.heads[at];
    if (known) return known;
    const { style } = this.options;
    const empty = emptyMarkdown(searchFirst);
    const counted: HeadTokens = {
      head: countTokens(fragmentHead(style, searchFirst)),
      empty: style === 'markdown' ? countTokens(empty) : 0,
      emptyBeforeOmitted: style === 'markdown' ? countTokens(`${empty}\n`) : 0,
    };
    this.heads[at] = counted;
    return counted;
  }

  /**
   * Tokens of the entry of skills[index]. Call it for every index without stored counts first
   * (countEntries does): it remembers how the others are counted.
   */
  entryTokens(index: number): number {
    const skill = this.skills[index]!;
    const { name, digest } = skill;
    const stored = this.storedCounts(skill);
    if (stored) return this.entryFixed + (this.options.style === 'xml' ? stored.xml : stored.markdown);
    const splits =
      digest !== undefined &&
      PLAIN_NAME.test(name) &&
      (this.options.style === 'xml' || NOT_BLANK.test(descriptionOf(skill)));
    if (!splits) {
      this.counted.set(index, null);
      return countTokens(renderEntry(skill, this.options));
    }
    const counts = countsOf(name, digest);
    this.counted.set(index, counts);
    if (this.options.style === 'markdown') {
      if (counts.markdown < 0) counts.markdown = markdownPartTokens(name, descriptionOf(skill));
      return this.entryFixed + counts.markdown;
    }
    if (counts.xml < 0) counts.xml = xmlPartTokens(name, descriptionOf(skill));
    return this.entryFixed + counts.xml;
  }

  /** The counts stored with the skill's version, when this layout's entry can be read from them. */
  private storedCounts(skill: PromptSkill): PromptEntryTokens | null {
    const stored = skill.promptTokens;
    return stored && (this.options.style === 'xml' || stored.markdown >= 0) ? stored : null;
  }

  /** The counts of the parts of skills[index]'s entry; null when it is counted whole. */
  private partsOf(index: number): PromptEntryTokens | null {
    return this.storedCounts(this.skills[index]!) ?? this.counted.get(index) ?? null;
  }

  /** Tokens of ` name` in the omitted line. */
  listedTokens(index: number): number {
    const counts = this.partsOf(index);
    if (!counts) return countTokens(` ${this.skills[index]!.name}`);
    if (counts.listed < 0) counts.listed = countTokens(` ${this.skills[index]!.name}`);
    return counts.listed;
  }

  /** Tokens of every skill's ` name` in the omitted line, summed (a long loop: it yields meanwhile). */
  async allListedTokens(slicer: Slicer): Promise<number> {
    let tokens = 0;
    for (let i = 0; i < this.skills.length; i++) {
      tokens += this.listedTokens(i);
      if (slicer.due()) await slicer.pause();
    }
    return tokens;
  }

  /** markdown: what the blank line before the omitted line adds to the entry of skills[index]. */
  newlineAfter(index: number, entryTokens: number): number {
    if (this.options.style !== 'markdown') return 0;
    if (this.partsOf(index)) return this.lastEntryNewline;
    let added = this.newlineAdded.get(index);
    if (added === undefined) {
      added = countTokens(`${renderEntry(this.skills[index]!, this.options)}\n`) - entryTokens;
      this.newlineAdded.set(index, added);
    }
    return added;
  }

  /**
   * Tokens of the fragment listing entries that count `keptTokens` together (`last` the last of them,
   * undefined when none), followed by an omitted line of `lineTokens` (0 when nothing is omitted),
   * with the list's or the search-first instructions.
   */
  total(keptTokens: number, last: CountedEntry | undefined, lineTokens: number, searchFirst = false): number {
    const { head, empty, emptyBeforeOmitted } = this.headsOf(searchFirst);
    if (this.options.style === 'xml') return head + keptTokens + this.closeTokens + lineTokens;
    if (last === undefined) return head + (lineTokens > 0 ? emptyBeforeOmitted + lineTokens : empty);
    return head + keptTokens + (lineTokens > 0 ? this.newlineAfter(last.index, last.tokens) + lineTokens : 0);
  }
}

/** The tokens of every entry of a rendering, by index, and their sum. */
export interface EntryTokens {
  readonly byIndex: Int32Array;
  readonly total: number;
}

/** What an entry holds besides the skill itself: the style and the location URL (base and tag). */
export function layoutKeyOf(options: PromptOptions): string {
  return `${options.style}|${options.baseUrl}|${options.tag ?? ''}`;
}

/** Counts every entry of the layout's skills (Layout.entryTokens, in order), yielding meanwhile. */
export async function countEntries(layout: Layout, slicer: Slicer): Promise<EntryTokens> {
  const byIndex = new Int32Array(layout.skills.length);
  const columns = promptColumnsOf(layout.skills);
  // Stored counts are read from the selection's columns; the others are counted (and remembered).
  const stored = layout.options.style === 'xml' ? columns.xml : columns.markdown;
  let total = 0;
  for (let i = 0; i < byIndex.length; i++) {
    byIndex[i] = stored[i]! >= 0 ? layout.entryFixed + stored[i]! : layout.entryTokens(i);
    total += byIndex[i]!;
    if (slicer.due()) await slicer.pause();
  }
  return { byIndex, total };
}

let omittedConstants: { prefix: number; comma: number; end: number } | undefined;

/**
 * Tokens of the omitted line naming `count` skills whose ` name` parts count `namesTokens` together
 * (see prompt-render.ts omittedLine).
 */
export function namedLineTokens(count: number, namesTokens: number): number {
  if (count === 0) return 0;
  omittedConstants ??= {
    prefix: countTokens(OMITTED_PREFIX),
    comma: countTokens(','),
    end: countTokens('.\n'),
  };
  const { prefix, comma, end } = omittedConstants;
  return prefix + namesTokens + (count - 1) * comma + end;
}

/** Tokens of the omitted line counting `count` skills without naming them. */
export function unlistedLineTokens(count: number): number {
  return count === 0 ? 0 : countTokens(unlistedLine(count));
}
