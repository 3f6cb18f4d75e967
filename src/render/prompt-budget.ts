import { AppError } from '../domain/app-errors.js';
import { everyIndex, keepOrder } from './drop-order.js';
import { keepOrderOfSelection } from './prompt-memo.js';
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

/**
 * How many skills of the keep order are ranked first (keepOrder): more than a budget of a few thousand
 * tokens keeps, with room for the most loaded of those it drops. A fit that keeps more ranks more.
 */
const KEEP_FIRST = 1024;
/** Each time the ranked part is too short, it grows this many times (all of it past an eighth). */
const KEEP_GROWTH = 16;

/**
 * The first `size` skills of the keep order (the reverse of dropOrder: the most loaded first), or more,
 * remembered for the selection (the same array while it does not change) and layout, so another
 * budget or a repeated request ranks nothing again.
 */
function keptFirst(
  skills: readonly PromptSkill[],
  entryTokens: Int32Array,
  options: PromptOptions,
  size: number,
): Int32Array {
  const layoutKey = layoutKeyOf(options);
  const wanted = Math.min(size, skills.length);
  const known = keepOrderOfSelection.get(skills, layoutKey);
  if (known && known.length >= wanted) return known;
  const ranked = wanted * 8 >= skills.length ? skills.length : wanted;
  const order = keepOrder(skills, entryTokens, ranked);
  keepOrderOfSelection.set(skills, layoutKey, order);
  return order;
}

/** The greatest m in [low, high] with cost(m) <= limit, for a cost that does not fall as m grows (low - 1 if none). */
function lastWithin(low: number, high: number, cost: (m: number) => number, limit: number): number {
  while (low <= high) {
    const middle = (low + high) >>> 1;
    if (cost(middle) <= limit) low = middle + 1;
    else high = middle - 1;
  }
  return high;
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
  /** How many skills of the keep order to rank at first (default KEEP_FIRST); tests pass small ones. */
  keepFirst?: number;
}

/** A candidate that fits: its rendering and its tokens. */
interface Candidate {
  rendered: RenderedPrompt;
  tokens: number;
}

/** The skills a budget dropped: how many, and which, read from the keep order when asked. */
export interface DroppedSkills {
  readonly count: number;
  /** The first `limit` of them (at most), most loaded first: indices. */
  mostLoaded(limit: number): number[];
  /** All of them, least loaded first (the drop order): indices. With a large catalogue, nearly every skill. */
  all(): ArrayLike<number>;
}

const NONE_DROPPED: DroppedSkills = { count: 0, mostLoaded: () => [], all: () => [] };

/**
 * The fragment chosen, which skills it lists (`kept`: indices, ascending), which it dropped, and
 * whether its instructions are search-first.
 */
export interface FittedPrompt extends Candidate {
  kept: Int32Array;
  dropped: DroppedSkills;
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

/** Sums over the first M skills of a keep order, by m <= M: their entries, their names, the last listed. */
interface PrefixSums {
  keptEntries: Float64Array;
  keptNames: Float64Array;
  /** The greatest index (catalogue order) among the first m; -1 for m = 0. */
  lastKept: Int32Array;
}

/** See BudgetFitting.prefixSums: by keep order (itself remembered per selection and layout). */
const prefixSumsOfOrder = new WeakMap<Int32Array, PrefixSums>();

/**
 * Fitting works with m, how many skills are kept: the first m of the keep order (the most loaded),
 * so a small budget over a large catalogue looks at the few skills it may keep and never at the
 * rest. The tokens dropped skills take in the omitted line are the whole catalogue's less the kept
 * ones'; that whole is summed only when naming them could fit at all.
 */
class BudgetFitting {
  /** The skills the current candidate lists, by index, ascending; undefined while it lists every skill. */
  private kept: Int32Array | undefined;
  /** Set once a whole count disagreed with a computed one: candidates near the budget are then counted whole. */
  private exact = false;
  private searchFirst: boolean;
  /** With every skill dropped: whether the line naming them is shorter than the one counting them. */
  private namesShortest = false;
  /** Tokens of every skill's ` name` in the omitted line, once summed. */
  private allNames: number | undefined;

  constructor(private readonly input: FitInput) {
    this.searchFirst = input.mode === 'search';
  }

  async fit(): Promise<FittedPrompt> {
    const { skills, layout, entries } = this.input;
    const count = skills.length;
    const all = layout.total(entries.total, this.entry(count - 1), 0, this.searchFirst);
    const full = await this.accept(all, false);
    if (full) return this.fitted(full, NONE_DROPPED);
    // accept() takes any candidate without a budget, so there is one from here on.
    const budget = this.input.budget!;
    if (count === 0) throw new PromptBudgetError(budget, countTokens((await this.render(false)).prompt));
    // Not every skill fits: the fragment lists the most loaded that do and sends the model to search
    // for the rest.
    this.searchFirst = true;
    const fit = await this.keepInOrder(budget);
    if (fit) return fit;
    throw new PromptBudgetError(budget, countTokens((await this.render(this.namesShortest)).prompt));
  }

  /**
   * Keeps the most loaded skills that fit with the omitted line naming the others, or else counting
   * them. Keeping one skill more always costs tokens (its entry holds its name twice and more; the
   * named line loses the name and a comma, the counting line a digit at most), so the greatest m that
   * may fit is found by bisection over prefix sums in keep order, and only candidates from there down
   * are rendered. Leaves every skill dropped when none fits.
   */
  private async keepInOrder(budget: number): Promise<FittedPrompt | undefined> {
    const { skills, slicer } = this.input;
    const count = skills.length;
    const limit = budget + SLACK;
    let order = this.keepOrder(this.input.keepFirst ?? KEEP_FIRST);
    let { named, unlisted } = await this.tokensAfterKeeping(order, limit);
    const least = (m: number) => Math.min(named(m), unlisted(m));
    // Keeping every skill ranked so far may fit: rank more.
    while (order.length < count && least(order.length) <= limit) {
      order = this.keepOrder(order.length * KEEP_GROWTH);
      ({ named, unlisted } = await this.tokensAfterKeeping(order, limit));
    }
    for (let m = lastWithin(0, Math.min(order.length, count - 1), least, limit); m >= 0; m--) {
      if (least(m) > limit) continue;
      this.keepFirst(order, m);
      // Names first: they tell the model more than a count, for the same skills listed.
      for (const names of [true, false]) {
        const computed = names ? named(m) : unlisted(m);
        if (computed > limit) continue;
        const fit = await this.accept(computed, names);
        if (fit) return this.fitted(fit, this.droppedAfter(m));
      }
      if (slicer.due()) await slicer.pause();
    }
    this.keepFirst(order, 0);
    // Naming every skill is only the shorter line for a very few (and is never rendered otherwise).
    this.namesShortest = (await this.namedTokens(order, unlisted(0)))(0) < unlisted(0);
    return undefined;
  }

  /** The first `size` skills of the keep order or more (see keptFirst). */
  private keepOrder(size: number): Int32Array {
    const { skills, entries, options } = this.input;
    return keptFirst(skills, entries.byIndex, options, size);
  }

  /**
   * The computed tokens of the search-first fragment keeping the first m skills of `order` (m at most
   * its length), by m: with the omitted line naming the others (a lower bound above `limit` when
   * naming them cannot fit), and with the line counting them.
   */
  private async tokensAfterKeeping(
    order: Int32Array,
    limit: number,
  ): Promise<{ named: (m: number) => number; unlisted: (m: number) => number }> {
    const count = this.input.skills.length;
    const { keptEntries, lastKept } = await this.prefixSums(order);
    const { layout } = this.input;
    const unlisted = (m: number) =>
      layout.total(keptEntries[m]!, this.entry(lastKept[m]!), unlistedLineTokens(count - m), true);
    return { named: await this.namedTokens(order, limit), unlisted };
  }

  /**
   * Tokens with the omitted line naming the skills not kept, by m. Each name is a token at least:
   * while that bound is above `limit` even with no skill kept (the bound grows with m), the names are
   * not summed and the bound stands in.
   */
  private async namedTokens(order: Int32Array, limit: number): Promise<(m: number) => number> {
    const { skills, layout } = this.input;
    const count = skills.length;
    const { keptEntries, keptNames, lastKept } = await this.prefixSums(order);
    const withLine = (m: number, names: number) =>
      layout.total(keptEntries[m]!, this.entry(lastKept[m]!), namedLineTokens(count - m, names), true);
    if (this.allNames === undefined && withLine(0, count) > limit) return (m) => withLine(m, count - m);
    this.allNames ??= await layout.allListedTokens(this.input.slicer);
    const allNames = this.allNames;
    return (m) => withLine(m, allNames - keptNames[m]!);
  }

  /**
   * Sums over the keep order, by m: the tokens of the first m entries and of their names in the
   * omitted line, and the last skill still listed. They depend on the order alone (remembered per
   * selection and layout), not on the budget: kept with it, so another budget does not sum again.
   */
  private async prefixSums(order: Int32Array): Promise<PrefixSums> {
    const known = prefixSumsOfOrder.get(order);
    if (known) return known;
    const { layout, entries, slicer } = this.input;
    const size = order.length;
    const keptEntries = new Float64Array(size + 1);
    const keptNames = new Float64Array(size + 1);
    const lastKept = new Int32Array(size + 1);
    lastKept[0] = -1;
    for (let m = 0; m < size; m++) {
      const index = order[m]!;
      keptEntries[m + 1] = keptEntries[m]! + entries.byIndex[index]!;
      keptNames[m + 1] = keptNames[m]! + layout.listedTokens(index);
      lastKept[m + 1] = Math.max(lastKept[m]!, index);
      if (slicer.due()) await slicer.pause();
    }
    const sums = { keptEntries, keptNames, lastKept };
    prefixSumsOfOrder.set(order, sums);
    return sums;
  }

  /** What was dropped when the first m of the keep order are kept: the rest, read from it when asked. */
  private droppedAfter(m: number): DroppedSkills {
    const count = this.input.skills.length;
    return {
      count: count - m,
      mostLoaded: (limit) => {
        const order = this.keepOrder(m + limit);
        return Array.from(order.subarray(m, Math.min(order.length, m + limit)));
      },
      all: () => this.keepOrder(count).slice(m).reverse(),
    };
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
    this.kept ??= everyIndex(this.input.skills.length);
    return this.input.renderer.render(this.kept, style);
  }

  /** Keeps the first m skills of `order` (in catalogue order) and drops the rest. */
  private keepFirst(order: Int32Array, m: number): void {
    this.kept = order.slice(0, m).sort();
  }

  /** The entry of skills[index] with its tokens; undefined for index -1 (no entry). */
  private entry(index: number): CountedEntry | undefined {
    return index < 0 ? undefined : { index, tokens: this.input.entries.byIndex[index]! };
  }

  private fitted(candidate: Candidate, dropped: DroppedSkills): FittedPrompt {
    return { ...candidate, kept: this.kept!, dropped, searchFirst: this.searchFirst };
  }
}
