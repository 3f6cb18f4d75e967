import { AppError } from '../errors.js';
import { countTokens } from './token-count.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL } from './tools.js';
import { escapeXml } from './xml.js';

/**
 * The system-prompt fragment for remote agents (layer 1): short instructions to load a skill before
 * following it, then the selected skills in the `<available_skills>` layout of the Agent Skills
 * reference tooling (or a Markdown list), fitted into an optional token budget.
 */

/** What the fragment needs to know about one skill. */
export interface PromptSkill {
  name: string;
  description: string;
  version: string;
  frontmatter: Record<string, unknown>;
  tokens: { description: number; body: number };
  /** Last layer-2 load; null when never loaded. Budgets drop the least recently loaded first. */
  lastLoadedAt: Date | null;
}

export type OmissionReason = 'budget' | 'not-found' | 'model-invocation-disabled';

export interface OmittedSkill {
  name: string;
  reason: OmissionReason;
}

export interface SkillSelection {
  /** Only these skills (in the catalogue's order); unknown ones are reported as not-found. */
  names?: readonly string[];
  /** Dist-tag whose versions are listed (default latest). */
  tag?: string;
  /** Full-text search over names and descriptions; results come most relevant first. */
  q?: string;
}

/** Anything that lists the current catalogue with what the fragment needs (SkillsRepository does). */
export interface AgentCatalogueSource {
  agentCatalogue(query: SkillSelection): Promise<PromptSkill[]>;
}

export interface SelectedSkills {
  /** Skills a model may invoke, in catalogue order. */
  skills: PromptSkill[];
  /** Skills named or matched that cannot be listed, with the reason. */
  omitted: OmittedSkill[];
}

/**
 * `disable-model-invocation: true` (Claude Code) means only a person may start the skill, so it is
 * never offered to a model. YAML written as a quoted "true" counts too.
 */
export function isModelInvocable(frontmatter: Record<string, unknown>): boolean {
  const flag = frontmatter['disable-model-invocation'];
  return !(flag === true || (typeof flag === 'string' && flag.trim().toLowerCase() === 'true'));
}

/**
 * The selection shared by GET /prompt, GET /tools and the MCP server: current versions under the tag,
 * filtered by names and q, minus skills a model must not invoke.
 */
export async function selectAgentSkills(
  source: AgentCatalogueSource,
  selection: SkillSelection,
): Promise<SelectedSkills> {
  const names = selection.names && selection.names.length > 0 ? [...new Set(selection.names)] : undefined;
  const entries = await source.agentCatalogue({ ...selection, names });
  const skills: PromptSkill[] = [];
  const omitted: OmittedSkill[] = [];
  for (const entry of entries) {
    if (isModelInvocable(entry.frontmatter)) skills.push(entry);
    else omitted.push({ name: entry.name, reason: 'model-invocation-disabled' });
  }
  if (names) {
    const found = new Set(entries.map((entry) => entry.name));
    for (const name of names) if (!found.has(name)) omitted.push({ name, reason: 'not-found' });
  }
  return { skills, omitted };
}

export type PromptStyle = 'xml' | 'markdown';

export interface PromptOptions {
  style: PromptStyle;
  /** Absolute base URL of the registry, without a trailing slash. */
  baseUrl: string;
  /** The dist-tag the selection used; locations then read that tag instead of latest. */
  tag?: string;
}

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

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function renderEntry(skill: PromptSkill, options: PromptOptions): string {
  const location = skillLocation(options.baseUrl, skill.name, options.tag);
  if (options.style === 'markdown') {
    return `- **${skill.name}**: ${oneLine(skill.description)} (location: ${location})\n`;
  }
  return `<skill>\n<name>${escapeXml(skill.name)}</name>\n<description>${escapeXml(skill.description)}</description>\n<location>${escapeXml(location)}</location>\n</skill>\n`;
}

/** The line naming skills left out for the budget; `listed` caps how many names it spells out. */
function omittedLine(names: readonly string[], listed = names.length): string {
  if (names.length === 0) return '';
  const shown = names.slice(0, listed);
  const rest = names.length - shown.length;
  if (shown.length === 0) {
    return `${rest} more skill${rest === 1 ? ' is' : 's are'} available but not described here, to save space.\n`;
  }
  return `Also available but not described here, to save space (load them by name): ${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}.\n`;
}

function assemble(entries: readonly string[], omitted: string, options: PromptOptions): string {
  const head = `${instructions(options.style)}\n\n`;
  if (options.style === 'markdown') {
    const list = entries.length > 0 ? `${entries.join('')}` : '(no skills are available)\n';
    return `## Available skills\n\n${head}${list}${omitted ? `\n${omitted}` : ''}`;
  }
  return `${head}<available_skills>\n${entries.join('')}</available_skills>\n${omitted}`;
}

export interface IncludedSkill {
  name: string;
  version: string;
  location: string;
  tokens: { entry: number; body: number };
}

export interface PromptResult {
  prompt: string;
  tokens: number;
  included: IncludedSkill[];
  /** Skills dropped to fit the budget (the fragment names them), in the order they were dropped. */
  omitted: OmittedSkill[];
}

export class PromptBudgetError extends AppError {
  constructor(budget: number, minimum: number) {
    super(
      400,
      'Bad Request',
      `budget=${budget} is too small: the instructions alone take ${minimum} tokens (o200k_base). Pass budget=${minimum} or more, or leave it out`,
      { minimum, budget, errors: [{ path: 'querystring.budget', detail: `must be at least ${minimum}` }] },
    );
  }
}

/**
 * Budgets drop the least recently loaded skill first (never loaded counts as least recent), then the
 * longest entry, then by name so the answer is deterministic.
 */
function dropOrder(skills: readonly PromptSkill[], entryTokens: readonly number[]): number[] {
  return skills
    .map((_, index) => index)
    .sort((a, b) => {
      const loadedA = skills[a]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
      const loadedB = skills[b]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
      if (loadedA !== loadedB) return loadedA < loadedB ? -1 : 1;
      if (entryTokens[a] !== entryTokens[b]) return entryTokens[b]! - entryTokens[a]!;
      return skills[a]!.name < skills[b]!.name ? -1 : 1;
    });
}

/**
 * Renders the fragment for the given skills (already selected, in display order). With a budget,
 * whole skills are dropped until the fragment, instructions and omitted line included, counts at most
 * `budget` tokens; a budget below what the fragment needs with every skill dropped is refused.
 */
export function buildPrompt(
  skills: readonly PromptSkill[],
  options: PromptOptions & { budget?: number },
): PromptResult {
  const entries = skills.map((skill) => renderEntry(skill, options));
  const entryTokens = entries.map((entry) => countTokens(entry));
  const result = (kept: readonly boolean[], listed?: number): PromptResult => {
    const droppedNames = skills.filter((_, i) => !kept[i]).map((skill) => skill.name);
    const prompt = assemble(
      entries.filter((_, i) => kept[i]),
      omittedLine(droppedNames, listed),
      options,
    );
    return {
      prompt,
      tokens: countTokens(prompt),
      included: skills
        .map((skill, i) => ({ skill, i }))
        .filter(({ i }) => kept[i])
        .map(({ skill, i }) => ({
          name: skill.name,
          version: skill.version,
          location: skillLocation(options.baseUrl, skill.name, options.tag),
          tokens: { entry: entryTokens[i]!, body: skill.tokens.body },
        })),
      omitted: [],
    };
  };

  const kept = skills.map(() => true);
  const full = result(kept);
  const { budget } = options;
  if (budget === undefined || full.tokens <= budget) return full;

  // Estimate with per-entry counts (tokens of a concatenation are within a few of the sum), verify
  // with an exact count at each candidate stop, and keep dropping while the exact count is over.
  const order = dropOrder(skills, entryTokens);
  const nameTokens = skills.map((skill) => countTokens(`${skill.name}, `));
  const base = countTokens(assemble([''], '', options));
  // A little slack so an estimate a few tokens high does not drop a skill that would have fitted.
  const slack = 16;
  const lineOverhead = countTokens(omittedLine(['x'])) - countTokens('x, ');
  let keptTotal = entryTokens.reduce((sum, n) => sum + n, 0);
  let namedTotal = 0;
  const dropped: number[] = [];
  for (const index of order) {
    kept[index] = false;
    dropped.push(index);
    keptTotal -= entryTokens[index]!;
    namedTotal += nameTokens[index]!;
    if (base + keptTotal + lineOverhead + namedTotal > budget + slack) continue;
    const attempt = result(kept);
    if (attempt.tokens <= budget) return withOmitted(attempt, dropped, skills);
  }

  // Every skill dropped and the names alone do not fit: spell out fewer of them.
  let low = 0;
  let high = skills.length;
  let best: PromptResult | undefined;
  while (low <= high) {
    const listed = Math.floor((low + high) / 2);
    const attempt = result(kept, listed);
    if (attempt.tokens <= budget) {
      best = attempt;
      low = listed + 1;
    } else {
      high = listed - 1;
    }
  }
  if (best) return withOmitted(best, dropped, skills);
  throw new PromptBudgetError(budget, result(kept, 0).tokens);
}

function withOmitted(
  result: PromptResult,
  dropped: readonly number[],
  skills: readonly PromptSkill[],
): PromptResult {
  return {
    ...result,
    omitted: dropped.map((index) => ({ name: skills[index]!.name, reason: 'budget' as const })),
  };
}
