import { dropOrderOfSelection } from '../cache/prompt-memo.js';
import { AppError } from '../errors.js';
import type { FragmentRenderer, RenderedPrompt } from './prompt-render.js';
import { type CountedEntry, type EntryTokens, type Layout, omittedLineTokens } from './prompt-tokens.js';
import type { PromptOptions, PromptSkill } from './prompt-types.js';
import type { Slicer } from './slicer.js';
import { countTokens } from './token-count.js';

/**
 * Fitting the fragment into a token budget: whole skills are dropped, least loaded first (dropOrder),
 * until the fragment, instructions and omitted line included, counts at most the budget. Candidates
 * are judged by the counts prompt-tokens.ts computes, and small ones are confirmed by a whole count.
 */

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
 * Computed counts are exact by construction; a budgeted fragment up to this many characters (about
 * 50,000 tokens) is also counted whole, as a check (a part at a time: parts join where counts add up).
 */
const VERIFY_LIMIT = 200_000;
/** When a whole count ever disagrees, candidates this close to the budget are counted whole. */
const SLACK = 16;

/**
 * Budgets keep the most loaded skills: the order drops the fewest recorded loads first, then the least
 * recently loaded (never loaded counts as least recent), then the longest entry, then by name so the
 * answer is deterministic. All-time counts rather than recency alone: one load of a rarely used skill
 * must not push out one agents load all day; recency only separates equal counts.
 */
function dropOrder(skills: readonly PromptSkill[], entryTokens: Float64Array): Int32Array {
  const loads = new Float64Array(skills.length);
  const loaded = new Float64Array(skills.length);
  for (let i = 0; i < skills.length; i++) {
    loads[i] = skills[i]!.loadCount;
    loaded[i] = skills[i]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  }
  const order = new Int32Array(skills.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => {
    if (loads[a] !== loads[b]) return loads[a]! - loads[b]!;
    if (loaded[a] !== loaded[b]) return loaded[a]! < loaded[b]! ? -1 : 1;
    if (entryTokens[a] !== entryTokens[b]) return entryTokens[b]! - entryTokens[a]!;
    return skills[a]!.name < skills[b]!.name ? -1 : 1;
  });
}

/** dropOrder, remembered for the selection (the same array while it does not change) and layout. */
function rememberedDropOrder(
  skills: readonly PromptSkill[],
  entryTokens: Float64Array,
  options: PromptOptions,
): Int32Array {
  const layoutKey = `${options.style}|${options.baseUrl}|${options.tag ?? ''}`;
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

/** The greatest k in [low, high] that `holds`, for a test that holds up to some k; -1 if none. */
async function lastHolding(
  low: number,
  high: number,
  holds: (k: number) => Promise<boolean>,
): Promise<number> {
  let best = -1;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    if (await holds(middle)) {
      best = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return best;
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

/** The fragment chosen, which skills it lists (`kept`, by index) and which it dropped, in drop order. */
export interface FittedPrompt extends Candidate {
  kept: Uint8Array;
  dropped: ArrayLike<number>;
}

/**
 * The fragment for the given skills, fitted into the budget when there is one: whole skills are
 * dropped until it fits, every dropped skill named in the omitted line, then as many of their names as
 * fit; a budget below what the fragment needs with every skill dropped is refused.
 */
export async function fitPrompt(input: FitInput): Promise<FittedPrompt> {
  return await new BudgetFitting(input).fit();
}

class BudgetFitting {
  /** 1 for each skill the current candidate lists, by index. */
  private readonly kept: Uint8Array;
  /** How many skills of the drop order `kept` has dropped. */
  private droppedCount = 0;
  /** Set once a whole count disagreed with a computed one: candidates near the budget are then counted whole. */
  private exact = false;

  constructor(private readonly input: FitInput) {
    this.kept = new Uint8Array(input.skills.length).fill(1);
  }

  async fit(): Promise<FittedPrompt> {
    const { skills, options, layout, entries } = this.input;
    const count = skills.length;
    const full = await this.accept(layout.total(entries.total, this.entry(count - 1), 0));
    if (full) return this.fitted(full, []);
    // accept() takes any candidate without a budget, so there is one from here on.
    const budget = this.input.budget!;
    const order = rememberedDropOrder(skills, entries.byIndex, options);
    const fit = (await this.dropInOrder(order, budget)) ?? (await this.spellOutNames(order, budget));
    if (fit) return fit;
    throw new PromptBudgetError(budget, countTokens((await this.render(0)).prompt));
  }

  /**
   * Drops skills in order until the fragment fits, every dropped skill named. Dropping a skill always
   * saves tokens (its entry holds its name twice and more; the omitted line gains the name and a
   * comma), so the first count of dropped skills that may fit is found by bisection over prefix sums
   * in drop order, and only candidates from there on are rendered. Leaves every skill dropped when
   * none fits.
   */
  private async dropInOrder(order: Int32Array, budget: number): Promise<FittedPrompt | undefined> {
    const { skills, slicer } = this.input;
    const computedAfter = await this.tokensAfterDropping(order);
    for (let k = firstWithin(1, skills.length, computedAfter, budget + SLACK); k <= skills.length; k++) {
      const computed = computedAfter(k);
      if (computed > budget + SLACK) continue;
      this.dropFirst(order, k);
      const fit = await this.accept(computed);
      if (fit) return this.fitted(fit, order.subarray(0, k));
      if (slicer.due()) await slicer.pause();
    }
    this.dropFirst(order, skills.length);
    return undefined;
  }

  /** The computed tokens of the fragment once the first k skills of `order` are dropped, by k. */
  private async tokensAfterDropping(order: Int32Array): Promise<(k: number) => number> {
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
    return (k) =>
      layout.total(
        entries.total - droppedEntries[k]!,
        this.entry(lastKept[k]!),
        omittedLineTokens(k, k, droppedNames[k]!),
      );
  }

  /** Every skill dropped and the names alone do not fit: spells out as many of them as fit. */
  private async spellOutNames(order: Int32Array, budget: number): Promise<FittedPrompt | undefined> {
    const { skills, layout } = this.input;
    const count = skills.length;
    const prefix = new Float64Array(count + 1);
    for (let i = 0; i < count; i++) prefix[i + 1] = prefix[i]! + layout.listedTokens(i);
    const computedFor = (listed: number) =>
      layout.total(0, undefined, omittedLineTokens(count, listed, prefix[listed]!));
    const fits = async (listed: number): Promise<boolean> =>
      this.exact
        ? (await this.accept(computedFor(listed), listed)) !== undefined
        : computedFor(listed) <= budget;
    // A second search only runs when the whole count of the first one's answer disagreed.
    for (let attempt = 0; attempt < 2; attempt++) {
      const best = await lastHolding(0, count, fits);
      if (best < 0) break;
      const fit = await this.accept(computedFor(best), best);
      if (fit) return this.fitted(fit, order);
    }
    return undefined;
  }

  /**
   * The current candidate, rendered with the first `spelled` omitted names spelled out, if it fits:
   * by its computed count, confirmed by a whole count when the text is small enough (after a
   * disagreement, every candidate near the budget is counted whole). Without a budget, any fits.
   */
  private async accept(computed: number, spelled?: number): Promise<Candidate | undefined> {
    const { budget, slicer } = this.input;
    if (budget === undefined) return { rendered: await this.render(spelled), tokens: computed };
    if (computed > budget + (this.exact ? SLACK : 0)) return undefined;
    const rendered = await this.render(spelled);
    if (!this.exact && rendered.prompt.length > VERIFY_LIMIT) return { rendered, tokens: computed };
    const tokens = await wholeCount(rendered.parts, slicer);
    if (tokens !== computed) this.exact = true;
    return tokens <= budget ? { rendered, tokens } : undefined;
  }

  private render(spelled?: number): Promise<RenderedPrompt> {
    return this.input.renderer.render(this.kept, spelled);
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
    return { ...candidate, kept: this.kept, dropped };
  }
}
