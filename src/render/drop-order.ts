import { kthHighest } from '../search/top-k.js';
import { isInNameOrder, promptColumnsOf } from './prompt-columns.js';
import type { PromptSkill } from './prompt-types.js';

/** Index ranks and token counts a never-loaded skill's sort key packs (see dropOrder): 2^24 and 2^28. */
const RANK_LIMIT = 2 ** 24;
const TOKEN_LIMIT = 2 ** 28;

/**
 * The order a budget drops skills in (prompt-budget.ts): the fewest recorded loads first, then the least
 * recently loaded (never loaded counts as least recent), then the longest entry, then by name so the
 * answer is deterministic. All-time counts rather than recency alone: one load of a rarely used skill
 * must not push out one agents load all day; recency only separates equal counts.
 *
 * Most skills of a large catalogue were never loaded: those come first, ordered by one number each
 * (tokens, then the name's rank, packed into a float: a sort of numbers, no comparison function), and
 * only the loaded ones are compared one by one. A million entries sort in a fraction of the time.
 */
export function dropOrder(skills: readonly PromptSkill[], entryTokens: Int32Array): Int32Array {
  const count = skills.length;
  const rank = nameRanks(skills) ?? everyIndex(count);
  const { loads, loadedAt: loaded } = promptColumnsOf(skills);
  let neverLoaded = 0;
  let packable = count < RANK_LIMIT;
  for (let i = 0; i < count; i++) {
    if (loads[i] === 0 && loaded[i] === Number.NEGATIVE_INFINITY) {
      neverLoaded += 1;
      const tokens = entryTokens[i]!;
      if (!(Number.isInteger(tokens) && tokens >= 0 && tokens < TOKEN_LIMIT)) packable = false;
    }
  }
  const compare = (a: number, b: number) => {
    if (loads[a] !== loads[b]) return loads[a]! - loads[b]!;
    if (loaded[a] !== loaded[b]) return loaded[a]! < loaded[b]! ? -1 : 1;
    if (entryTokens[a] !== entryTokens[b]) return entryTokens[b]! - entryTokens[a]!;
    return rank[a]! - rank[b]!;
  };
  const order = new Int32Array(count);
  if (!packable) {
    for (let i = 0; i < count; i++) order[i] = i;
    return order.sort(compare);
  }
  // Never loaded: fewer loads and an earlier load than any other skill, so they lead; among them the
  // longest entry first, then by name: ascending (TOKEN_LIMIT - tokens) * RANK_LIMIT + rank.
  const keys = new Float64Array(neverLoaded);
  const rest: number[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (loads[i] === 0 && loaded[i] === Number.NEGATIVE_INFINITY)
      keys[at++] = (TOKEN_LIMIT - entryTokens[i]!) * RANK_LIMIT + rank[i]!;
    else rest.push(i);
  }
  keys.sort();
  const byRank = inverse(rank);
  for (let k = 0; k < neverLoaded; k++) order[k] = byRank[keys[k]! % RANK_LIMIT]!;
  rest.sort(compare);
  order.set(rest, neverLoaded);
  return order;
}

/**
 * The first `limit` skills a budget keeps: dropOrder reversed (the most loaded first), cut after
 * `limit`, without sorting the whole catalogue. A budget of a few thousand tokens keeps a few dozen
 * skills of a million, so only the loaded skills that may be kept are sorted by the rule (those with
 * at least the limit-th highest load count), and the never-loaded ones needed after them are those
 * with the highest packed keys, found in one pass (kthHighest), then sorted. `limit` at or above the
 * count: the whole order.
 */
export function keepOrder(
  skills: readonly PromptSkill[],
  entryTokens: Int32Array,
  limit: number,
): Int32Array {
  const count = skills.length;
  if (limit >= count || count >= RANK_LIMIT) return dropOrder(skills, entryTokens).reverse();
  const rank = nameRanks(skills);
  const { loads, loadedAt } = promptColumnsOf(skills);
  const never = (i: number) => loads[i] === 0 && loadedAt[i] === Number.NEGATIVE_INFINITY;
  const loaded: number[] = [];
  for (let i = 0; i < count; i++) {
    if (!never(i)) loaded.push(i);
    else if (!Number.isInteger(entryTokens[i]) || entryTokens[i]! < 0 || entryTokens[i]! >= TOKEN_LIMIT) {
      return dropOrder(skills, entryTokens).reverse().subarray(0, limit);
    }
  }
  const order = new Int32Array(limit);
  const kept = keptLoaded(skills, entryTokens, rank, loaded, limit);
  order.set(kept);
  const wanted = limit - kept.length;
  if (wanted === 0) return order;
  // Never loaded, kept last to first dropped: the highest keys, highest first. Keys are made as they
  // are compared (twice: for the lowest one kept, then to collect those), not stored for every skill.
  const key = (i: number) =>
    (TOKEN_LIMIT - entryTokens[i]!) * RANK_LIMIT + (rank === undefined ? i : rank[i]!);
  const lowest = kthHighest(count, wanted, key, never);
  // Keys are distinct (the rank is), so exactly `wanted` reach the lowest kept.
  const chosen = new Float64Array(wanted);
  let found = 0;
  for (let i = 0; i < count; i++) if (never(i) && key(i) >= lowest) chosen[found++] = key(i);
  chosen.sort().reverse();
  const byRank = rank === undefined ? undefined : inverse(rank);
  for (let at = 0; at < wanted; at++) {
    const place = chosen[at]! % RANK_LIMIT;
    order[kept.length + at] = byRank === undefined ? place : byRank[place]!;
  }
  return order;
}

/** The `limit` loaded skills a budget keeps first (at most), the most loaded first. */
function keptLoaded(
  skills: readonly PromptSkill[],
  entryTokens: Int32Array,
  rank: Int32Array | undefined,
  loaded: readonly number[],
  limit: number,
): number[] {
  const { loads, loadedAt } = promptColumnsOf(skills);
  const kept = (a: number, b: number) => {
    if (loads[a] !== loads[b]) return loads[b]! - loads[a]!;
    if (loadedAt[a] !== loadedAt[b]) return loadedAt[a]! > loadedAt[b]! ? -1 : 1;
    if (entryTokens[a] !== entryTokens[b]) return entryTokens[a]! - entryTokens[b]!;
    return rank === undefined ? b - a : rank[b]! - rank[a]!;
  };
  if (loaded.length <= limit) return [...loaded].sort(kept);
  const fewest = kthHighest(
    loaded,
    limit,
    (i) => loads[i]!,
    () => true,
  );
  return loaded
    .filter((i) => loads[i]! >= fewest)
    .sort(kept)
    .slice(0, limit);
}

/**
 * Each skill's place in name order; undefined when the skills are in name order already (the
 * catalogue's): each one's place is then its index.
 */
function nameRanks(skills: readonly PromptSkill[]): Int32Array | undefined {
  if (isInNameOrder(skills)) return undefined;
  const rank = new Int32Array(skills.length);
  const byName = Array.from(skills, (_, i) => i).sort((a, b) =>
    skills[a]!.name < skills[b]!.name ? -1 : skills[a]!.name > skills[b]!.name ? 1 : a - b,
  );
  byName.forEach((index, place) => {
    rank[index] = place;
  });
  return rank;
}

/** Every index from 0 to count - 1, in order. */
export function everyIndex(count: number): Int32Array {
  const index = new Int32Array(count);
  for (let i = 0; i < count; i++) index[i] = i;
  return index;
}

/** The index of each place: `inverse(rank)[rank[i]] === i`. */
function inverse(rank: Int32Array): Int32Array {
  const index = new Int32Array(rank.length);
  for (let i = 0; i < rank.length; i++) index[rank[i]!] = i;
  return index;
}
