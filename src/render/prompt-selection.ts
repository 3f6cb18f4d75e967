import {
  carrySubsetColumns,
  disablesModelInvocation,
  inheritNameOrder,
  type PromptColumns,
  promptColumnsOf,
} from './prompt-columns.js';
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

export function isModelInvocable(frontmatter: Record<string, unknown>): boolean {
  return !disablesModelInvocation(frontmatter['disable-model-invocation']);
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
  if (names) return withNotFound(invocableOf(entries, promptColumnsOf(entries)), entries, names);
  // The same catalogue snapshot gives the same selection: the same arrays, which lets renderings
  // reuse what they computed for it (keep orders). Its columns are read once (or carried over from
  // the snapshot before), and the selection takes them from there.
  let selected = selectionOfSnapshot.get(entries);
  if (!selected) {
    selected = invocableOf(entries, promptColumnsOf(entries));
    selectionOfSnapshot.set(entries, selected);
  }
  return selected;
}

/**
 * The entries a model may invoke, and the others as omitted. Most catalogues disable invocation for
 * none or a few: the entries are then not copied, or copied without reading each one again.
 */
function invocableOf(entries: readonly AgentSkill[], columns: PromptColumns): SelectedSkills {
  const disabled = (i: number) => columns.disabled[i] === 1;
  const omitted: OmittedSkill[] = [];
  if (columns.disabledCount > 0) {
    for (let i = 0; i < entries.length; i++) {
      if (disabled(i)) omitted.push({ name: entries[i]!.name, reason: 'model-invocation-disabled' });
    }
  }
  if (omitted.length === 0) return { skills: entries, omitted };
  const skills = new Array<AgentSkill>(entries.length - omitted.length);
  let at = 0;
  for (let i = 0; i < entries.length; i++) if (!disabled(i)) skills[at++] = entries[i]!;
  inheritNameOrder(entries, skills);
  carrySubsetColumns(entries, skills, (i) => !disabled(i));
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
