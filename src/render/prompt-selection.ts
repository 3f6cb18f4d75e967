import { inheritNameOrder } from './prompt-columns.js';
import { selectionOfSnapshot } from './prompt-memo.js';
import type { AgentSkill, OmittedSkill, SelectedSkills } from './prompt-types.js';

/**
 * Which skills the fragment (GET /prompt) and the tool definitions (GET /tools) offer an agent: the
 * current catalogue, narrowed by names, tag and search, minus the skills a model must not invoke.
 */

export interface SkillSelection {
  /** Only these skills (in the catalogue's order); unknown ones are reported as not-found. */
  names?: readonly string[];
  /** Dist-tag whose versions are listed (default latest). */
  tag?: string;
  /** Full-text search over names and descriptions; results come most relevant first. */
  q?: string;
}

export interface AgentCatalogueQuery extends SkillSelection {
  /** false: descriptions are left out (empty), for callers that need the names only. */
  descriptions?: boolean;
}

/**
 * Anything that lists the current catalogue with what the fragment needs (SkillsRepository does):
 * every skill of the selection, however many, in the catalogue's order.
 */
export interface AgentCatalogueSource {
  agentCatalogue(query: AgentCatalogueQuery): Promise<AgentSkill[]>;
}

/**
 * `disable-model-invocation: true` (Claude Code) means only a person may start the skill, so it is
 * never offered to a model. YAML written as a quoted "true" counts too.
 */
export function isModelInvocable(frontmatter: Record<string, unknown>): boolean {
  return !disablesModelInvocation(frontmatter['disable-model-invocation']);
}

function disablesModelInvocation(flag: unknown): boolean {
  return flag === true || (typeof flag === 'string' && flag.trim().toLowerCase() === 'true');
}

/**
 * The selection shared by GET /prompt and GET /tools: current versions under the tag, filtered by
 * names and q, minus skills a model must not invoke. `descriptions: false` when only names are needed.
 */
export async function selectAgentSkills(
  source: AgentCatalogueSource,
  selection: SkillSelection,
  options: { descriptions?: boolean } = {},
): Promise<SelectedSkills> {
  const names = selection.names && selection.names.length > 0 ? [...new Set(selection.names)] : undefined;
  const entries = await source.agentCatalogue({
    ...selection,
    names,
    ...(options.descriptions === false ? { descriptions: false } : {}),
  });
  if (names) return withNotFound(invocableOf(entries), entries, names);
  // The same catalogue snapshot gives the same selection: the same arrays, which lets renderings
  // reuse what they computed for it (drop orders).
  let selected = selectionOfSnapshot.get(entries);
  if (!selected) {
    selected = invocableOf(entries);
    selectionOfSnapshot.set(entries, selected);
  }
  return selected;
}

/**
 * The entries a model may invoke, and the others as omitted. Most catalogues disable invocation for
 * none or a few, and a large one is not copied for none.
 */
function invocableOf(entries: readonly AgentSkill[]): SelectedSkills {
  const omitted: OmittedSkill[] = [];
  for (const entry of entries) {
    if (disablesModelInvocation(entry.disableModelInvocation)) {
      omitted.push({ name: entry.name, reason: 'model-invocation-disabled' });
    }
  }
  if (omitted.length === 0) return { skills: entries, omitted };
  const skills = new Array<AgentSkill>(entries.length - omitted.length);
  let at = 0;
  for (const entry of entries) {
    if (!disablesModelInvocation(entry.disableModelInvocation)) skills[at++] = entry;
  }
  inheritNameOrder(entries, skills);
  return { skills, omitted };
}

/** `selected` with the `names` asked for that are not among the entries added as not-found. */
function withNotFound(
  selected: SelectedSkills,
  entries: readonly AgentSkill[],
  names: readonly string[],
): SelectedSkills {
  const found = new Set(entries.map((entry) => entry.name));
  for (const name of names) if (!found.has(name)) selected.omitted.push({ name, reason: 'not-found' });
  return selected;
}
