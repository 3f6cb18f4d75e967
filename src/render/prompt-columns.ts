import type { PromptSkill } from './prompt-types.js';

/**
 * What budget fitting reads of every skill of a selection, copied once per selection into typed
 * arrays. A large catalogue is a million objects spread over the heap: reading them again for each
 * layout (style, base URL, tag) and each pass cost a cache miss per skill each time.
 */
export interface PromptColumns {
  /** Recorded loads, by index. */
  readonly loads: Float64Array;
  /** The last load, in milliseconds since the epoch; -Infinity when never loaded. */
  readonly loadedAt: Float64Array;
  /** The stored counts of each entry's own parts (PromptEntryTokens.xml), -1 without them. */
  readonly xml: Float64Array;
  /** The same for markdown: -1 without them or for a blank description. */
  readonly markdown: Float64Array;
}

const columnsOfSelection = new WeakMap<readonly PromptSkill[], PromptColumns>();

/** The columns of a selection (the same array while it does not change), read once. */
export function promptColumnsOf(skills: readonly PromptSkill[]): PromptColumns {
  const known = columnsOfSelection.get(skills);
  if (known) return known;
  const count = skills.length;
  const columns = {
    loads: new Float64Array(count),
    loadedAt: new Float64Array(count),
    xml: new Float64Array(count).fill(-1),
    markdown: new Float64Array(count).fill(-1),
  };
  for (let i = 0; i < count; i++) {
    const skill = skills[i]!;
    columns.loads[i] = skill.loadCount;
    columns.loadedAt[i] = skill.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
    const stored = skill.promptTokens;
    if (stored) {
      columns.xml[i] = stored.xml;
      columns.markdown[i] = stored.markdown;
    }
  }
  columnsOfSelection.set(skills, columns);
  return columns;
}

/** Whether each selection is in name order (each name once, by `<`), as marked or as checked. */
const nameOrder = new WeakMap<readonly PromptSkill[], boolean>();

/** Says `skills` are in name order: their source sorted them so (the agent catalogue copy does). */
export function markInNameOrder(skills: readonly PromptSkill[]): void {
  nameOrder.set(skills, true);
}

/** `subset` (some of `skills`, in their order) is in name order when `skills` was marked so. */
export function inheritNameOrder(skills: readonly PromptSkill[], subset: readonly PromptSkill[]): void {
  if (nameOrder.get(skills) === true) nameOrder.set(subset, true);
}

/** Whether `skills` are in name order: marked so, or checked once (and remembered). */
export function isInNameOrder(skills: readonly PromptSkill[]): boolean {
  let sorted = nameOrder.get(skills);
  if (sorted === undefined) {
    sorted = true;
    for (let i = 1; i < skills.length && sorted; i++) sorted = skills[i - 1]!.name < skills[i]!.name;
    nameOrder.set(skills, sorted);
  }
  return sorted;
}
