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
export function dropOrder(skills: readonly PromptSkill[], entryTokens: Float64Array): Int32Array {
  const count = skills.length;
  const rank = nameRanks(skills);
  const loads = new Float64Array(count);
  const loaded = new Float64Array(count);
  let neverLoaded = 0;
  let packable = count < RANK_LIMIT;
  for (let i = 0; i < count; i++) {
    loads[i] = skills[i]!.loadCount;
    loaded[i] = skills[i]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
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
  const byRank = rankToIndex(rank);
  for (let k = 0; k < neverLoaded; k++) order[k] = byRank[keys[k]! % RANK_LIMIT]!;
  rest.sort(compare);
  order.set(rest, neverLoaded);
  return order;
}

/** Each skill's place in name order: its index when the skills are in name order already (the catalogue's). */
function nameRanks(skills: readonly PromptSkill[]): Int32Array {
  const rank = new Int32Array(skills.length);
  let sorted = true;
  for (let i = 1; i < skills.length && sorted; i++) sorted = skills[i - 1]!.name < skills[i]!.name;
  if (sorted) {
    for (let i = 0; i < rank.length; i++) rank[i] = i;
    return rank;
  }
  const byName = Array.from(skills, (_, i) => i).sort((a, b) =>
    skills[a]!.name < skills[b]!.name ? -1 : skills[a]!.name > skills[b]!.name ? 1 : a - b,
  );
  byName.forEach((index, place) => {
    rank[index] = place;
  });
  return rank;
}

function rankToIndex(rank: Int32Array): Int32Array {
  const index = new Int32Array(rank.length);
  for (let i = 0; i < rank.length; i++) index[rank[i]!] = i;
  return index;
}
