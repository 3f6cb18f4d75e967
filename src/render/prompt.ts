import type { Verdict } from '../scan/types.js';
import { type FittedPrompt, fitPrompt } from './prompt-budget.js';
import { FragmentRenderer, skillLocation } from './prompt-render.js';
import { countEntries, type EntryTokens, Layout, layoutKeyOf } from './prompt-tokens.js';
import type { OmittedSkill, PromptMode, PromptOptions, PromptSkill } from './prompt-types.js';
import { Slicer } from './slicer.js';

/**
 * The system-prompt fragment for remote agents (layer 1): short instructions to load a skill before
 * following it, then the selected skills in the `<available_skills>` layout of the Agent Skills
 * reference tooling (or a Markdown list), fitted into an optional token budget.
 *
 * The work is split by concern: prompt-selection.ts chooses the skills, prompt-tokens.ts counts their
 * entries, prompt-budget.ts drops skills until the fragment fits, prompt-render.ts writes the text;
 * src/render/prompt-memo.ts remembers what they compute across renderings. This module puts them
 * together and is where callers import all of it from.
 */

export { clearEntryTokenMemo } from './prompt-memo.js';

import { countedLayoutOfSelection } from './prompt-memo.js';

export { PromptBudgetError } from './prompt-budget.js';
export { followPromptColumns, markInNameOrder, type SharedRun } from './prompt-columns.js';
export { skillLocation } from './prompt-render.js';
export {
  type AgentCatalogueQuery,
  type AgentCatalogueSource,
  isModelInvocable,
  type SkillSelection,
  selectAgentSkills,
} from './prompt-selection.js';
export { promptEntryTokens } from './prompt-tokens.js';
export type {
  AgentSkill,
  OmissionReason,
  OmittedSkill,
  PromptEntryTokens,
  PromptMode,
  PromptOptions,
  PromptSkill,
  PromptStyle,
  SelectedSkills,
} from './prompt-types.js';

export interface IncludedSkill {
  name: string;
  /** In a view: the layer the skill resolves to. */
  namespace?: string;
  version: string;
  location: string;
  tokens: { entry: number; body: number };
  /** The version's scan verdict; null for versions stored before scanning. */
  scan: { verdict: Verdict } | null;
}

/** One object per verdict, shared by every entry of every rendering (a large catalogue lists many). */
const SCAN_VERDICTS = new Map<string, { verdict: Verdict }>();

function scanOf(verdict: string | null | undefined): { verdict: Verdict } | null {
  if (verdict == null) return null;
  let scan = SCAN_VERDICTS.get(verdict);
  if (scan === undefined) {
    scan = Object.freeze({ verdict: verdict as Verdict });
    SCAN_VERDICTS.set(verdict, scan);
  }
  return scan;
}

export interface PromptResult {
  prompt: string;
  /**
   * `prompt` in consecutive parts (the instructions, a thousand entries at a time, the closing lines),
   * for callers that convert a long fragment a part at a time.
   */
  parts: string[];
  tokens: number;
  included: IncludedSkill[];
  /**
   * Skills dropped to fit the budget (the fragment names or counts them), in the order they were
   * dropped (least loaded first). Made when first read: with a large catalogue, nearly every skill.
   */
  omitted: OmittedSkill[];
  /** How many skills were dropped to fit the budget. */
  omittedCount: number;
  /** The first `limit` of the dropped skills, most loaded first (the reverse of the drop order). */
  mostLoadedOmitted(limit: number): OmittedSkill[];
  /**
   * The instructions send the model to search_skills when no listed skill fits: mode=search, or a
   * budget that could not hold every skill.
   */
  searchFirst: boolean;
}

/**
 * Renders the fragment for the given skills (already selected, in display order). With a budget that
 * cannot hold them all, the fragment turns search-first (as mode=search always is): whole skills are
 * dropped, least loaded first, until the fragment, instructions and omitted line included, counts at
 * most `budget` tokens; a budget below what the fragment needs with every skill dropped is refused
 * (PromptBudgetError). Listed skills keep the display order.
 *
 * Every skill is either listed or, with a budget, named in `omitted`, however many there are. Token
 * counts come from remembered per-skill parts (see Layout), so after a publish only the changed skills
 * are tokenized; long loops yield to the event loop.
 */
export async function buildPrompt(
  skills: readonly PromptSkill[],
  options: PromptOptions & { budget?: number; mode?: PromptMode },
): Promise<PromptResult> {
  const slicer = new Slicer();
  const layoutKey = layoutKeyOf(options);
  const known = countedLayoutOfSelection.get(skills, layoutKey);
  let layout: Layout;
  let entries: EntryTokens;
  if (known) {
    layout = known.layout as Layout;
    entries = known.entries;
  } else {
    layout = new Layout(options, skills);
    entries = await countEntries(layout, slicer);
    countedLayoutOfSelection.set(skills, layoutKey, { layout, entries });
  }
  const renderer = new FragmentRenderer(skills, options, slicer);
  const fitted = await fitPrompt({
    skills,
    options,
    budget: options.budget,
    mode: options.mode ?? 'list',
    layout,
    entries,
    renderer,
    slicer,
  });
  return await promptResult(skills, options, entries, fitted, slicer);
}

async function promptResult(
  skills: readonly PromptSkill[],
  options: PromptOptions,
  entries: EntryTokens,
  { rendered, tokens, kept, dropped, searchFirst }: FittedPrompt,
  slicer: Slicer,
): Promise<PromptResult> {
  const included: IncludedSkill[] = [];
  for (const i of kept) {
    if (slicer.due()) await slicer.pause();
    const skill = skills[i]!;
    const namespace = options.namespaceOf?.(skill.name);
    included.push({
      name: skill.name,
      ...(namespace === undefined ? {} : { namespace }),
      version: skill.version,
      location: skillLocation(options.baseUrl, skill.name, options.tag),
      tokens: { entry: entries.byIndex[i]!, body: skill.tokens.body },
      scan: scanOf(skill.scanVerdict),
    });
  }
  // Only the JSON layout lists what was dropped (with a large catalogue and a small budget, nearly
  // all): the list is made when asked for.
  let omitted: OmittedSkill[] | undefined;
  const result = {
    prompt: rendered.prompt,
    parts: rendered.parts,
    tokens,
    included,
    searchFirst,
    get omitted() {
      omitted ??= Array.from(dropped.all(), (index) => ({
        name: skills[index]!.name,
        reason: 'budget' as const,
      }));
      return omitted;
    },
    omittedCount: dropped.count,
  };
  // Not enumerable: a result is data (compared, spread) and this reads it, it is not part of it.
  return Object.defineProperty(result, 'mostLoadedOmitted', {
    enumerable: false,
    value: (limit: number): OmittedSkill[] =>
      dropped.mostLoaded(limit).map((index) => ({ name: skills[index]!.name, reason: 'budget' as const })),
  }) as PromptResult;
}

/**
 * What the JSON layout says was left out, at most `limit` names whatever the catalogue's size: the
 * names asked for that were not found (the caller's own mistake, bounded by the request), then the
 * skills the budget dropped, most loaded first, then those that disable model invocation; `omittedCount`
 * counts them all.
 */
export function namedOmissions(
  result: Pick<PromptResult, 'omittedCount' | 'mostLoadedOmitted'>,
  selectionOmitted: readonly OmittedSkill[],
  limit: number,
): { omitted: OmittedSkill[]; omittedCount: number } {
  const notFound = selectionOmitted.filter((skill) => skill.reason === 'not-found');
  const omitted = notFound.slice(0, limit);
  omitted.push(...result.mostLoadedOmitted(limit - omitted.length));
  for (const skill of selectionOmitted) {
    if (omitted.length >= limit) break;
    if (skill.reason !== 'not-found') omitted.push(skill);
  }
  return { omitted, omittedCount: result.omittedCount + selectionOmitted.length };
}
