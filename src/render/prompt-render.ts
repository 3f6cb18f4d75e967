import type { PromptOptions, PromptSkill, PromptStyle } from './prompt-types.js';
import type { Slicer } from './slicer.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL, SEARCH_SKILLS_TOOL } from './tool-definitions.js';
import { escapeXmlText } from './xml.js';

/**
 * The text of the system-prompt fragment: the instructions, the entries in the `<available_skills>`
 * layout of the Agent Skills reference tooling (or a Markdown list), and the line naming (or counting)
 * the skills a budget left out. A fragment that leaves skills out is search-first: its instructions
 * send the model to search_skills when no listed skill fits. prompt-tokens.ts counts the same text
 * in parts, so the two change together.
 */

/** The absolute layer-2 URL of a skill, which `<location>` carries. */
export function skillLocation(baseUrl: string, name: string, tag?: string): string {
  const query = tag && tag !== 'latest' ? `?tag=${encodeURIComponent(tag)}` : '';
  return `${baseUrl}/skills/${encodeURIComponent(name)}/content${query}`;
}

function instructions(style: PromptStyle, searchFirst: boolean): string {
  const location = style === 'xml' ? "the skill's <location> URL" : "the skill's location URL";
  const lines = [
    "The skills below are packaged instructions for specific tasks. A skill is not a tool: never call a skill's name as a tool.",
    `When a task matches a skill's description, first call the ${LOAD_SKILL_TOOL} tool with the skill's name (${LOAD_SKILL_TOOL} {"name": "<skill name>"}), then follow the instructions it returns; read any file they mention with ${READ_SKILL_FILE_TOOL}. Without these tools, fetch ${location} instead.`,
  ];
  if (!searchFirst) {
    lines.push('Use only the skills listed here, and only when they fit the task.');
  } else {
    // The list is partial: "nothing listed fits" must lead to a search before the task is done
    // without a skill, and a search result to load_skill (scripted agent loops check that order).
    lines.push(
      `The list below may be incomplete: when no skill listed here matches the task, first call the ${SEARCH_SKILLS_TOOL} tool with a short description of the task (${SEARCH_SKILLS_TOOL} {"query": "<the task in a few words>"}), then call ${LOAD_SKILL_TOOL} with the name of the result that matches and follow its instructions. Do the task without a skill only when no result matches.`,
      `Use only skills listed here or returned by ${SEARCH_SKILLS_TOOL}, and only when they fit the task.`,
    );
  }
  return lines.join('\n');
}

/**
 * What comes before the first entry: the heading (markdown), the instructions, the list's opening.
 * `searchFirst`: the instructions for a list that may be partial (see instructions()).
 */
export function fragmentHead(style: PromptStyle, searchFirst = false): string {
  const head = `${instructions(style, searchFirst)}\n\n`;
  return style === 'markdown' ? `## Available skills\n\n${head}` : `${head}<available_skills>\n`;
}

/** xml: what closes the list of entries. */
export const XML_LIST_END = '</available_skills>\n';
/** markdown: what stands for the list when no skill is listed. */
export const EMPTY_MARKDOWN = '(no skills are available)\n';
/** markdown, search-first: the same, when skills may still be found by searching. */
export const EMPTY_MARKDOWN_SEARCH = '(no skills are listed here)\n';

export function emptyMarkdown(searchFirst: boolean): string {
  return searchFirst ? EMPTY_MARKDOWN_SEARCH : EMPTY_MARKDOWN;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The description a skill carries; one without it must have been described for the rendering. */
export function descriptionOf(skill: PromptSkill): string {
  if (skill.description === undefined) throw new Error(`no description for ${skill.name}`);
  return skill.description;
}

export function renderEntry(
  skill: PromptSkill,
  options: PromptOptions,
  description = descriptionOf(skill),
): string {
  const location = skillLocation(options.baseUrl, skill.name, options.tag);
  if (options.style === 'markdown') {
    return `- **${skill.name}**: ${oneLine(description)} (location: ${location})\n`;
  }
  return `<skill>\n<name>${escapeXmlText(skill.name)}</name>\n<description>${escapeXmlText(description)}</description>\n<location>${escapeXmlText(location)}</location>\n</skill>\n`;
}

/** How the omitted line begins when it names skills. */
export const OMITTED_PREFIX = 'Also available but not described here, to save space (load them by name):';

/** The line naming the skills left out for the budget (the fragment is then search-first). */
function omittedLine(names: readonly string[]): string {
  return names.length === 0 ? '' : `${OMITTED_PREFIX} ${names.join(', ')}.\n`;
}

/** The line counting the `count` skills left out when their names do not fit either. */
export function unlistedLine(count: number): string {
  return `${count} more skill${count === 1 ? ' is' : 's are'} available but not described here: find ${count === 1 ? 'it' : 'them'} with ${SEARCH_SKILLS_TOOL}.\n`;
}

/** The fragment, in parts (see PromptResult.parts): `entries` are the entries, joined or not. */
function assemble(
  entries: readonly string[],
  omitted: string,
  style: PromptStyle,
  searchFirst: boolean,
): string[] {
  const head = fragmentHead(style, searchFirst);
  if (style === 'markdown') {
    const list = entries.length > 0 ? [...entries] : [emptyMarkdown(searchFirst)];
    if (!omitted) return [head, ...list];
    // The blank line before the omitted line goes with the list: `)\n\n` is one pre-token.
    list[list.length - 1] += '\n';
    return [head, ...list, omitted];
  }
  return [head, ...entries, `${XML_LIST_END}${omitted}`];
}

/**
 * The parts as one string without copying them (V8 keeps a concatenation as a rope until something
 * needs it flat), so a caller that only converts the parts never copies the whole fragment at once.
 */
function concatenate(parts: readonly string[]): string {
  let text = '';
  for (const part of parts) text += part;
  return text;
}

/** A rendered fragment: the text, and the same text in parts (see PromptResult.parts). */
export interface RenderedPrompt {
  prompt: string;
  parts: string[];
}

/** Entries are joined this many at a time, so no single step copies the whole list. */
const ENTRIES_PER_PART = 1000;

/**
 * How a candidate fragment is written: `searchFirst` selects the instructions; `names` whether the
 * omitted line names the skills left out (else it counts them).
 */
export interface RenderStyle {
  searchFirst: boolean;
  names: boolean;
}

/**
 * Renders the fragments one buildPrompt call considers: the same skills, each kept (listed) or left
 * out (named in the omitted line, or counted in it).
 */
export class FragmentRenderer {
  /**
   * Descriptions fetched for this rendering (skills given without one); a later candidate lists a
   * subset of an earlier one's skills, so each is fetched at most once.
   */
  private readonly described = new Map<string, string>();

  constructor(
    private readonly skills: readonly PromptSkill[],
    private readonly options: PromptOptions,
    private readonly slicer: Slicer,
  ) {}

  /**
   * The fragment listing the skills `kept` holds (indices, ascending); the omitted line names the
   * others (in catalogue order, as the entries are) or counts them.
   */
  async render(kept: Int32Array, { searchFirst, names: named }: RenderStyle): Promise<RenderedPrompt> {
    await this.describe(kept);
    const { skills, options, described, slicer } = this;
    const entryParts: string[] = [];
    let entries: string[] = [];
    for (const index of kept) {
      const skill = skills[index]!;
      entries.push(renderEntry(skill, options, skill.description ?? described.get(skill.name) ?? ''));
      if (entries.length === ENTRIES_PER_PART) {
        entryParts.push(entries.join(''));
        entries = [];
      }
      if (slicer.due()) await slicer.pause();
    }
    if (entries.length > 0) entryParts.push(entries.join(''));
    const left = skills.length - kept.length;
    const line = left === 0 ? '' : named ? omittedLine(await this.namesLeftOut(kept)) : unlistedLine(left);
    const parts = assemble(entryParts, line, options.style, searchFirst);
    return { prompt: concatenate(parts), parts };
  }

  /** The names of the skills `kept` does not hold, in catalogue order. */
  private async namesLeftOut(kept: Int32Array): Promise<string[]> {
    const names: string[] = [];
    let next = 0;
    for (let i = 0; i < this.skills.length; i++) {
      if (next < kept.length && kept[next] === i) next += 1;
      else names.push(this.skills[i]!.name);
      if (this.slicer.due()) await this.slicer.pause();
    }
    return names;
  }

  /** Fetches the descriptions of the kept skills given without one, not fetched before. */
  private async describe(kept: Int32Array): Promise<void> {
    const missing: PromptSkill[] = [];
    for (const index of kept) {
      const skill = this.skills[index]!;
      if (skill.description === undefined && !this.described.has(skill.name)) missing.push(skill);
    }
    if (missing.length === 0) return;
    if (!this.options.describe) throw new Error('skills without descriptions need PromptOptions.describe');
    for (const [name, description] of await this.options.describe(missing)) {
      this.described.set(name, description);
    }
  }
}
