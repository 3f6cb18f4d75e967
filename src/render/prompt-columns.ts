import type { PromptSkill } from './prompt-types.js';

/**
 * What budget fitting and the selection read of every skill, copied once per selection into typed
 * arrays. A large catalogue is a million objects spread over the heap: reading them again for each
 * layout (style, base URL, tag) and each pass cost a cache miss per skill each time. The agent
 * catalogue copy carries them from one snapshot to the next (followPromptColumns), so a publish
 * reads only the entries it changed.
 */
export interface PromptColumns {
  /** Recorded loads, by index. */
  readonly loads: Float64Array;
  /** The last load, in milliseconds since the epoch; -Infinity when never loaded. */
  readonly loadedAt: Float64Array;
  /** The stored counts of each entry's own parts (PromptEntryTokens.xml), -1 without them. */
  readonly xml: Int32Array;
  /** The same for markdown: -1 without them or for a blank description. */
  readonly markdown: Int32Array;
  /** 1 for a skill whose frontmatter disables model invocation (see disablesModelInvocation). */
  readonly disabled: Uint8Array;
  readonly disabledCount: number;
}

/**
 * `disable-model-invocation: true` (Claude Code) means only a person may start the skill, so it is
 * never offered to a model. YAML written as a quoted "true" counts too.
 */
export function disablesModelInvocation(flag: unknown): boolean {
  return flag === true || (typeof flag === 'string' && flag.trim().toLowerCase() === 'true');
}

type ColumnArrays = { -readonly [K in keyof PromptColumns]: PromptColumns[K] };

function emptyColumns(count: number): ColumnArrays {
  return {
    loads: new Float64Array(count),
    loadedAt: new Float64Array(count),
    xml: new Int32Array(count),
    markdown: new Int32Array(count),
    disabled: new Uint8Array(count),
    disabledCount: 0,
  };
}

/** Reads `skill` into the columns at `at` (disabledCount is the caller's to count). */
function readInto(columns: ColumnArrays, at: number, skill: PromptSkill): void {
  columns.loads[at] = skill.loadCount;
  columns.loadedAt[at] = skill.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  const stored = skill.promptTokens;
  columns.xml[at] = stored ? stored.xml : -1;
  columns.markdown[at] = stored ? stored.markdown : -1;
  const flag = (skill as { disableModelInvocation?: unknown }).disableModelInvocation;
  columns.disabled[at] = disablesModelInvocation(flag) ? 1 : 0;
}

const columnsOfSelection = new WeakMap<readonly PromptSkill[], PromptColumns>();

/** The columns of a selection (the same array while it does not change), read once. */
export function promptColumnsOf(skills: readonly PromptSkill[]): PromptColumns {
  const known = columnsOfSelection.get(skills);
  if (known) return known;
  const columns = emptyColumns(skills.length);
  for (let i = 0; i < skills.length; i++) {
    readInto(columns, i, skills[i]!);
    columns.disabledCount += columns.disabled[i]!;
  }
  columnsOfSelection.set(skills, columns);
  return columns;
}

/** The columns of a selection when they were read or carried over already; nothing is read. */
export function knownPromptColumns(skills: readonly PromptSkill[]): PromptColumns | undefined {
  return columnsOfSelection.get(skills);
}

/** Entries a snapshot shares with the one before: next[to + k] is base[from + k] for k < length. */
export interface SharedRun {
  readonly to: number;
  readonly from: number;
  readonly length: number;
}

/**
 * Carries the columns of `base` over to `next`, when base has them: both in name order (each name
 * once), next holding base's entries (the same objects) but for some replaced, added or removed. With
 * `runs` (in order, from whoever made next: applyDelta) those are copied and every other entry of next
 * is read; without, the entries are compared as references, and names only where they differ. Either
 * way a snapshot after a publish costs a copy of the columns, not a read of a million skills.
 */
export function followPromptColumns(
  base: readonly PromptSkill[],
  next: readonly PromptSkill[],
  runs?: readonly SharedRun[],
): void {
  const from = columnsOfSelection.get(base);
  if (!from || columnsOfSelection.has(next)) return;
  const to = copyShared(from, next, runs ?? sharedByReference(base, next));
  for (let at = 0; at < to.disabled.length; at++) to.disabledCount += to.disabled[at]!;
  columnsOfSelection.set(next, to);
}

/** Columns for `next`: the runs copied from `from`, every other entry read. */
function copyShared(
  from: PromptColumns,
  next: readonly PromptSkill[],
  runs: readonly SharedRun[],
): ColumnArrays {
  const to = emptyColumns(next.length);
  let done = 0;
  for (const run of runs) {
    for (let i = done; i < run.to; i++) readInto(to, i, next[i]!);
    copyRun(to, run.to, from, run.from, run.from + run.length);
    done = run.to + run.length;
  }
  for (let i = done; i < next.length; i++) readInto(to, i, next[i]!);
  return to;
}

/** The runs `next` shares with `base`, found by comparing their entries as references. */
function sharedByReference(base: readonly PromptSkill[], next: readonly PromptSkill[]): SharedRun[] {
  const runs: SharedRun[] = [];
  let i = 0;
  let j = 0;
  while (i < next.length) {
    const start = i;
    const baseStart = j;
    while (i < next.length && j < base.length && next[i] === base[j]) {
      i += 1;
      j += 1;
    }
    if (i > start) runs.push({ to: start, from: baseStart, length: i - start });
    if (i === next.length) break;
    // Then one entry that differs: entries of base that sort before it were removed, one of the
    // same name was replaced, and otherwise it is new.
    const entry = next[i]!;
    while (j < base.length && base[j]!.name < entry.name) j += 1;
    if (j < base.length && base[j] === entry) continue;
    if (j < base.length && base[j]!.name === entry.name) j += 1;
    i += 1;
  }
  return runs;
}

/** Copies the values of `from` from `start` up to `end` into `to` at `target`, without counting them. */
function copyRun(to: ColumnArrays, target: number, from: PromptColumns, start: number, end: number): void {
  to.loads.set(from.loads.subarray(start, end), target);
  to.loadedAt.set(from.loadedAt.subarray(start, end), target);
  to.xml.set(from.xml.subarray(start, end), target);
  to.markdown.set(from.markdown.subarray(start, end), target);
  to.disabled.set(from.disabled.subarray(start, end), target);
}

/** The columns of `subset`, the skills of `skills` that `keep` (by index) lets through, in order. */
export function carrySubsetColumns(
  skills: readonly PromptSkill[],
  subset: readonly PromptSkill[],
  keep: (index: number) => boolean,
): void {
  const from = columnsOfSelection.get(skills);
  if (!from) return;
  const to = emptyColumns(subset.length);
  let at = 0;
  let i = 0;
  while (i < skills.length) {
    // Runs of kept skills are copied whole.
    while (i < skills.length && !keep(i)) i += 1;
    const start = i;
    while (i < skills.length && keep(i)) i += 1;
    copyRun(to, at, from, start, i);
    at += i - start;
  }
  for (let k = 0; k < to.disabled.length; k++) to.disabledCount += to.disabled[k]!;
  columnsOfSelection.set(subset, to);
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
