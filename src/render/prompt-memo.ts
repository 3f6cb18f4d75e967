import type { AgentSkill, PromptEntryTokens, PromptSkill, SelectedSkills } from './prompt-types.js';

/**
 * The in-process memos of the system-prompt fragment (src/render/prompt*.ts). Each only saves work:
 * with all of them empty, renderings give the same fragments.
 */

/**
 * A value per key for one version of it (a digest): asking with another digest replaces the value.
 * At most `limit` keys are kept; beyond that the earliest remembered go first.
 */
export class VersionMemo<V extends { readonly digest: string }> {
  private readonly values = new Map<string, V>();

  constructor(
    private readonly limit: number,
    private readonly create: (digest: string) => V,
  ) {}

  /** The value remembered for `key` at `digest`, or a new one (from `create`) remembered in its place. */
  of(key: string, digest: string): V {
    const known = this.values.get(key);
    if (known !== undefined && known.digest === digest) return known;
    if (known !== undefined) this.values.delete(key);
    const value = this.create(digest);
    this.values.set(key, value);
    if (this.values.size > this.limit) this.values.delete(this.values.keys().next().value!);
    return value;
  }

  clear(): void {
    this.values.clear();
  }
}

/**
 * Values computed for a snapshot (an array its source hands out again, the very same object, while
 * what it lists does not change), by key. A snapshot's values go with it; at most `perSnapshot` keys
 * are kept for one snapshot (one more and they start afresh).
 */
export class SnapshotMemo<S extends object, V> {
  private readonly bySnapshot = new WeakMap<S, Map<string, V>>();

  constructor(private readonly perSnapshot: number) {}

  get(snapshot: S, key: string): V | undefined {
    return this.bySnapshot.get(snapshot)?.get(key);
  }

  set(snapshot: S, key: string, value: V): void {
    let byKey = this.bySnapshot.get(snapshot);
    if (!byKey) {
      byKey = new Map();
      this.bySnapshot.set(snapshot, byKey);
    }
    if (byKey.size >= this.perSnapshot) byKey.clear();
    byKey.set(key, value);
  }
}

/** Remembered counts of a skill's own entry parts, for the version with `digest`. */
export interface RememberedEntryTokens extends PromptEntryTokens {
  readonly digest: string;
}

/**
 * Counts of skill parts by skill name, for the version last seen. A publish changes one skill's
 * digest, so the next rendering counts that skill's parts again and nothing else. The limit bounds
 * the memory a catalogue with many renamed or removed skills could hold.
 */
const MEMO_LIMIT = 200_000;
const entryTokenMemo = new VersionMemo<RememberedEntryTokens>(MEMO_LIMIT, (digest) => ({
  digest,
  xml: -1,
  markdown: -1,
  listed: -1,
}));

/** The remembered counts of the skill `name` at `digest`; every count -1 (not yet counted) when new. */
export function countsOf(name: string, digest: string): RememberedEntryTokens {
  return entryTokenMemo.of(name, digest);
}

/** Forgets every remembered count (benchmarks measure cold renderings with it). */
export function clearEntryTokenMemo(): void {
  entryTokenMemo.clear();
}

/**
 * The selection of each whole catalogue snapshot (selectAgentSkills without names). The same snapshot
 * gives the same selection, the same arrays, which lets renderings reuse what they computed for it
 * (keep orders).
 */
export const selectionOfSnapshot = new WeakMap<readonly AgentSkill[], SelectedSkills>();

/**
 * The keep orders of recent selections (their first part, or all of it), by layout. A selection that
 * did not change is the same array (see selectionOfSnapshot), so renderings with other budgets reuse
 * its order instead of ranking the catalogue again.
 */
export const keepOrderOfSelection = new SnapshotMemo<readonly PromptSkill[], Int32Array>(8);

/**
 * The token layout and entry counts of recent selections, by layout key (style, base URL, tag: what an
 * entry holds besides the skill). A Layout learns which entries are counted in parts as it counts
 * them, so the two are kept together: a rendering with another budget of an unchanged selection
 * counts nothing again.
 */
export const countedLayoutOfSelection = new SnapshotMemo<
  readonly PromptSkill[],
  { layout: unknown; entries: { byIndex: Int32Array; total: number } }
>(8);
