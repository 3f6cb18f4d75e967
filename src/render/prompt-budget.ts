import { AppError } from '../domain/app-errors.js';
import { dropOrder } from './drop-order.js';
import { dropOrderOfSelection } from './prompt-memo.js';
import type { FragmentRenderer, RenderedPrompt, RenderStyle } from './prompt-render.js';
import {
  type CountedEntry,
  type EntryTokens,
  type Layout,
  layoutKeyOf,
  namedLineTokens,
  unlistedLineTokens,
} from './prompt-tokens.js';
import type { PromptMode, PromptOptions, PromptSkill } from './prompt-types.js';
import type { Slicer } from './slicer.js';
import { countTokens } from './token-count.js';

/**
 * Fitting the fragment into a token budget: whole skills are dropped, least loaded first (dropOrder),
 * until the fragment, instructions and omitted line included, counts at most the budget. Candidates
 * are judged by the counts prompt-tokens.ts computes, and small ones are confirmed by a whole count.
 */

export class PromptBudgetError extends AppError {
  /** `default`: the budget is the registry's (SKILLREG_PROMPT_BUDGET), the request named none. */
  constructor(budget: number, minimum: number, chosenBy: 'query' | 'default' = 'query') {
    const detail =
      chosenBy === 'query'
        ? `budget=${budget} is too small: the instructions alone take ${minimum} tokens (o200k_base). Pass budget=${minimum} or more, or budget=0 for no limit`
        : `the registry's default prompt budget (SKILLREG_PROMPT_BUDGET=${budget}) is too small: the instructions alone take ${minimum} tokens (o200k_base). Pass budget=${minimum} or more (budget=0 for no limit), or ask the operator to raise SKILLREG_PROMPT_BUDGET`;
    super(400, 'Bad Request', detail, {
      minimum,
      budget,
      errors: [{ path: 'querystring.budget', detail: `must be at least ${minimum}` }],
    });
  }

  /** The same refusal, saying the budget was the registry's default rather than the request's. */
  ofDefault(): PromptBudgetError {
    const { budget, minimum } = this.extensions as { budget: number; minimum: number };
    return new PromptBudgetError(budget, minimum, 'default');
  }
}

/**
 * Computed counts are exact by construction; a budgeted fragment up to this many characters (about
 * 50,000 tokens) is also counted whole, as a check (a part at a time: parts join where counts add up).
 */
const VERIFY_LIMIT = 200_000;
/** When a whole count ever disagrees, candidates this close to the budget are counted whole. */
const SLACK = 16;

/** dropOrder, remembered for the selection (the same array while it does not change) and layout. */
function rememberedDropOrder(
  skills: readonly PromptSkill[],
  entryTokens: Float64Array,
  options: PromptOptions,
): Int32Array {
  const layoutKey = layoutKeyOf(options);
  const known = dropOrderOfSelection.get(skills, layoutKey);
  if (known) return known;
  const order = dropOrder(skills, entryTokens);
  dropOrderOfSelection.set(skills, layoutKey, order);
  return order;
}

/** The least k in [low, high] with cost(k) <= limit, for a cost that does not grow with k (high if none). */
function firstWithin(low: number, high: number, cost: (k: number) => number, limit: number): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cost(middle) <= limit) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Whole count of a rendered fragment, a part at a time. */
async function wholeCount(parts: readonly string[], slicer: Slicer): Promise<number> {
  let tokens = 0;
  for (const part of parts) {
    tokens += countTokens(part);
    if (slicer.due()) await slicer.pause();
  }
  return tokens;
}

/** What fitting needs: the skills (in display order), their counts, and how to render them. */
export interface FitInput {
  skills: readonly PromptSkill[];
  options: PromptOptions;
  /** Undefined: every skill is listed. */
  budget: number | undefined;
  /** search: the fragment is search-first even when every skill fits. */
  mode: PromptMode;
  layout: Layout;
  entries: EntryTokens;
  renderer: FragmentRenderer;
  slicer: Slicer;
}

/** A candidate that fits: its rendering and its tokens. */
interface Candidate {
  rendered: RenderedPrompt;
  tokens: number;
}

/**
 * The fragment chosen, which skills it lists (`kept`, by index), which it dropped, in drop order, and
 * whether its instructions are search-first.
 */
export interface FittedPrompt extends Candidate {
  kept: Uint8Array;
  dropped: ArrayLike<number>;
  searchFirst: boolean;
}

/**
 * The fragment for the given skills, fitted into the budget when there is one. When every skill
 * fits, it lists them all (search-first only with mode=search). Otherwise it turns search-first: whole
 * skills are dropped, least loaded first, until the fragment fits with the omitted line naming the
 * dropped skills or, when even that does not fit, counting them; a budget below what the search-first
 * fragment needs with every skill dropped is refused.
 */
export async function fitPrompt(input: FitInput): Promise<FittedPrompt> {
  return await new BudgetFitting(input).fit();
}

interface PrefixSums {
  droppedEntries: Float64Array;
  droppedNames: Float64Array;
  lastKept: Int32Array;
}

/** See BudgetFitting.prefixSums: by drop order (itself remembered per selection and layout). */
const prefixSumsOfOrder = new WeakMap<Int32Array, PrefixSums>();

class BudgetFitting {
  /** 1 for each skill the current candidate lists, by index. */
  private readonly kept: Uint8Array;
  /** How many skills of the drop order `kept` has dropped. */
  private droppedCount = 0;
  /** Set once a whole count disagreed with a computed one: candidates near the budget are then counted whole. */
  private exact = false;
  private searchFirst: boolean;
  /** With every skill dropped: whether the line naming them is shorter than the one counting them. */
  private namesShortest = false;

  constructor(private readonly input: FitInput) {
    this.kept = new Uint8Array(input.skills.length).fill(1);
    this.searchFirst = input.mode === 'search';
  }

  async fit(): Promise<FittedPrompt> {
    const { skills, options, layout, entries } = this.input;
    const count = skills.length;
    const all = layout.total(entries.total, this.entry(count - 1), 0, this.searchFirst);
    const full = await this.accept(all, false);
    if (full) return this.fitted(full, []);
    // accept() takes any candidate without a budget, so there is one from here on.
    const budget = this.input.budget!;
    if (count === 0) throw new PromptBudgetError(budget, countTokens((await this.render(false)).prompt));
    // Not every skill fits: the fragment lists the most loaded that do and sends the model to search
    // for the rest.
    this.searchFirst = true;
    const order = rememberedDropOrder(skills, entries.byIndex, options);
    const fit = await this.dropInOrder(order, budget);
    if (fit) return fit;
    throw new PromptBudgetError(budget, countTokens((await this.render(this.namesShortest)).prompt));
  }

  /**
   * Drops skills in order until the fragment fits with the omitted line naming the dropped skills,
   * or else counting them. Dropping a skill always saves tokens (its entry holds its name twice and
   * more; the named line gains the name and a comma, the counting line a digit at most), so the first
   * count of dropped skills that may fit is found by bisection over prefix sums in drop order, and
   * only candidates from there on are rendered. Leaves every skill dropped when none fits.
   */
  private async dropInOrder(order: Int32Array, budget: number): Promise<FittedPrompt | undefined> {
    const { skills, slicer } = this.input;
    const { named, unlisted } = await this.tokensAfterDropping(order);
    const least = (k: number) => Math.min(named(k), unlisted(k));
    const limit = budget + SLACK;
    for (let k = firstWithin(1, skills.length, least, limit); k <= skills.length; k++) {
      if (least(k) > limit) continue;
      this.dropFirst(order, k);
      // Names first: they tell the model more than a count, for the same skills listed.
      for (const names of [true, false]) {
        const computed = names ? named(k) : unlisted(k);
        if (computed > limit) continue;
        const fit = await this.accept(computed, names);
        if (fit) return this.fitted(fit, order.subarray(0, k));
      }
      if (slicer.due()) await slicer.pause();
    }
    this.dropFirst(order, skills.length);
    // Naming every skill is only the shorter line for a very few (and is never rendered otherwise).
    this.namesShortest = named(skills.length) < unlisted(skills.length);
    return undefined;
  }

  /**
   * The computed tokens of the search-first fragment once the first k skills of `order` are dropped,
   * by k: with the omitted line naming them, and with the line counting them.
   */
  private async tokensAfterDropping(
    order: Int32Array,
  ): Promise<{ named: (k: number) => number; unlisted: (k: number) => number }> {
    const { layout, entries } = this.input;
    const { droppedEntries, droppedNames, lastKept } = await this.prefixSums(order);
    const total = (k: number, lineTokens: number) =>
      layout.total(entries.total - droppedEntries[k]!, this.entry(lastKept[k]!), lineTokens, true);
    return {
      named: (k) => total(k, namedLineTokens(k, droppedNames[k]!)),
      unlisted: (k) => total(k, unlistedLineTokens(k)),
    };
  }

  /**
   * Sums over the drop order, by k: the tokens of the first k entries and of their names in the
   * omitted line, and the last skill still listed. They depend on the order alone (remembered per
   * selection and layout), not on the budget: kept with it, so another budget does not sum again.
   */
  private async prefixSums(order: Int32Array): Promise<PrefixSums> {
    const known = prefixSumsOfOrder.get(order);
    if (known) return known;
    const { layout, entries, slicer } = this.input;
    const count = order.length;
    const droppedEntries = new Float64Array(count + 1);
    const droppedNames = new Float64Array(count + 1);
    for (let k = 0; k < count; k++) {
      const index = order[k]!;
      droppedEntries[k + 1] = droppedEntries[k]! + entries.byIndex[index]!;
      droppedNames[k + 1] = droppedNames[k]! + layout.listedTokens(index);
      if (slicer.due()) await slicer.pause();
    }
    // lastKept[k]: the last skill in catalogue order still listed once the first k are dropped (-1: none).
    const lastKept = new Int32Array(count + 1);
    lastKept[count] = -1;
    for (let k = count - 1; k >= 0; k--) lastKept[k] = Math.max(order[k]!, lastKept[k + 1]!);
    const sums = { droppedEntries, droppedNames, lastKept };
    prefixSumsOfOrder.set(order, sums);
    return sums;
  }

  /**
   * The current candidate, rendered (its omitted line naming the dropped skills or counting them), if
   * it fits: by its computed count, confirmed by a whole count when the text is small enough (after a
   * disagreement, every candidate near the budget is counted whole). Without a budget, any fits.
   */
  private async accept(computed: number, names: boolean): Promise<Candidate | undefined> {
    const { budget, slicer } = this.input;
    if (budget === undefined) return { rendered: await this.render(names), tokens: computed };
    if (computed > budget + (this.exact ? SLACK : 0)) return undefined;
    const rendered = await this.render(names);
    if (!this.exact && rendered.prompt.length > VERIFY_LIMIT) return { rendered, tokens: computed };
    const tokens = await wholeCount(rendered.parts, slicer);
    if (tokens !== computed) this.exact = true;
    return tokens <= budget ? { rendered, tokens } : undefined;
  }

  private render(names: boolean): Promise<RenderedPrompt> {
    const style: RenderStyle = { searchFirst: this.searchFirst, names };
    return this.input.renderer.render(this.kept, style);
  }

  /** Drops the first `count` skills of `order` from `kept` (those not dropped yet). */
  private dropFirst(order: Int32Array, count: number): void {
    for (; this.droppedCount < count; this.droppedCount++) this.kept[order[this.droppedCount]!] = 0;
  }

  /** The entry of skills[index] with its tokens; undefined for index -1 (no entry). */
  private entry(index: number): CountedEntry | undefined {
    return index < 0 ? undefined : { index, tokens: this.input.entries.byIndex[index]! };
  }

  private fitted(candidate: Candidate, dropped: ArrayLike<number>): FittedPrompt {
    return { ...candidate, kept: this.kept, dropped, searchFirst: this.searchFirst };
  }
}
