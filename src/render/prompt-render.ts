import type { PromptOptions, PromptSkill, PromptStyle } from './prompt-types.js';
import type { Slicer } from './slicer.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL } from './tools.js';
import { escapeXml } from './xml.js';

/**
 * The text of the system-prompt fragment: the instructions, the entries in the `<available_skills>`
 * layout of the Agent Skills reference tooling (or a Markdown list), and the line naming the skills a
 * budget left out. prompt-tokens.ts counts the same text in parts, so the two change together.
 */

/** The absolute layer-2 URL of a skill, which `<location>` carries. */
export function skillLocation(baseUrl: string, name: string, tag?: string): string {
  const query = tag && tag !== 'latest' ? `?tag=${encodeURIComponent(tag)}` : '';
  return `${baseUrl}/skills/${encodeURIComponent(name)}/content${query}`;
}

function instructions(style: PromptStyle): string {
  const location = style === 'xml' ? "the skill's <location> URL" : "the skill's location URL";
  return [
    "The skills below are packaged instructions for specific tasks. A skill is not a tool: never call a skill's name as a tool.",
    `When a task matches a skill's description, first call the ${LOAD_SKILL_TOOL} tool with the skill's name (${LOAD_SKILL_TOOL} {"name": "<skill name>"}), then follow the instructions it returns; read any file they mention with ${READ_SKILL_FILE_TOOL}. Without these tools, fetch ${location} instead.`,
    'Use only the skills listed here, and only when they fit the task.',
  ].join('\n');
}

/** What comes before the first entry: the heading (markdown), the instructions, the list's opening. */
export function fragmentHead(style: PromptStyle): string {
  const head = `${instructions(style)}\n\n`;
  return style === 'markdown' ? `## Available skills\n\n${head}` : `${head}<available_skills>\n`;
}

/** xml: what closes the list of entries. */
export const XML_LIST_END = '</available_skills>\n';
/** markdown: what stands for the list when no skill is listed. */
export const EMPTY_MARKDOWN = '(no skills are available)\n';

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
  return `<skill>\n<name>${escapeXml(skill.name)}</name>\n<description>${escapeXml(description)}</description>\n<location>${escapeXml(location)}</location>\n</skill>\n`;
}

/** How the omitted line begins when it names skills. */
export const OMITTED_PREFIX = 'Also available but not described here, to save space (load them by name):';

/** The line naming skills left out for the budget: `shown` spelled out, of `total` left out. */
function omittedLine(shown: readonly string[], total: number): string {
  if (total === 0) return '';
  const rest = total - shown.length;
  if (shown.length === 0) return unlistedLine(rest);
  return `${OMITTED_PREFIX} ${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}.\n`;
}

/** The omitted line when it names none of the `count` skills left out. */
export function unlistedLine(count: number): string {
  return `${count} more skill${count === 1 ? ' is' : 's are'} available but not described here, to save space.\n`;
}

/** The fragment, in parts (see PromptResult.parts): `entries` are the entries, joined or not. */
function assemble(entries: readonly string[], omitted: string, style: PromptStyle): string[] {
  const head = fragmentHead(style);
  if (style === 'markdown') {
    const list = entries.length > 0 ? [...entries] : [EMPTY_MARKDOWN];
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
   * The fragment listing the skills whose `kept` flag is set; the omitted line names the first
   * `spelled` of the others (in catalogue order, as the entries are), and counts the rest.
   */
  async render(kept: Uint8Array, spelled = this.skills.length): Promise<RenderedPrompt> {
    await this.describe(kept);
    const { skills, options, described, slicer } = this;
    const entryParts: string[] = [];
    let entries: string[] = [];
    const names: string[] = [];
    let left = 0;
    for (let i = 0; i < skills.length; i++) {
      if (kept[i]) {
        const skill = skills[i]!;
        entries.push(renderEntry(skill, options, skill.description ?? described.get(skill.name) ?? ''));
        if (entries.length === ENTRIES_PER_PART) {
          entryParts.push(entries.join(''));
          entries = [];
        }
      } else {
        if (left < spelled) names.push(skills[i]!.name);
        left += 1;
      }
      if (slicer.due()) await slicer.pause();
    }
    if (entries.length > 0) entryParts.push(entries.join(''));
    const parts = assemble(entryParts, omittedLine(names, left), options.style);
    return { prompt: concatenate(parts), parts };
  }

  /** Fetches the descriptions of the kept skills given without one, not fetched before. */
  private async describe(kept: Uint8Array): Promise<void> {
    const missing: PromptSkill[] = [];
    for (let i = 0; i < this.skills.length; i++) {
      const skill = this.skills[i]!;
      if (kept[i] && skill.description === undefined && !this.described.has(skill.name)) missing.push(skill);
    }
    if (missing.length === 0) return;
    if (!this.options.describe) throw new Error('skills without descriptions need PromptOptions.describe');
    for (const [name, description] of await this.options.describe(missing)) {
      this.described.set(name, description);
    }
  }
}
