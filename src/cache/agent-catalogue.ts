import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import {
  type AgentCatalogueQuery,
  type AgentCatalogueSource,
  type AgentSkill,
  followPromptColumns,
  markInNameOrder,
  type PromptEntryTokens,
  type SharedRun,
} from '../render/prompt.js';
import type { AgentCatalogueEntry, CatalogueRepository } from '../storage/catalogue-repository.js';
import { LATEST, type StateRevisions } from '../storage/records.js';
import type { CatalogueState } from './catalogue-state.js';
import { Interner } from './interner.js';
import { SerialCatchUp } from './serial-catch-up.js';

/**
 * An in-memory copy of the agent catalogue under `latest` (what GET /prompt and GET /tools list by
 * default), kept current by reading only what changed.
 *
 * Reading the whole selection from PostgreSQL takes long at large catalogues (docs/PERFORMANCE.md),
 * and holds the whole result in memory while it is parsed. Every write stamps its skill with the
 * catalogue revision it produced (and every flush of recorded loads stamps the loaded skills with the
 * loads revision, in the statement that adds to their load counts), so catching up from revision R is
 * one indexed statement that returns the few skills stamped above R, load counts included
 * (CatalogueRepository.agentCatalogueSince). The copy is replaced, never changed in place: a rendering
 * that yields to the event loop keeps a consistent snapshot while the next one is made.
 *
 * Only tag `latest` is served from the copy (with or without `name=`; with `q` the search service
 * picks the names); another tag reads the database.
 */
export interface CatalogueSnapshot extends StateRevisions {
  /** Every skill the tag points at a version of, by name (code point order, as the database's "C" collation). */
  readonly entries: readonly AgentSkill[];
}

/**
 * What few entries of the copy hold, kept out of the entry itself (in RARE_PARTS): loads, the
 * description and digest of a version stored without prompt counts (renderings count its entry and
 * remember the count by digest), a `disable-model-invocation` flag, and what did not pack into the
 * entry's numbers.
 */
interface RareParts {
  readonly description: string | undefined;
  readonly digest: string | undefined;
  readonly disableModelInvocation: string | null;
  readonly loadCount: number;
  readonly lastLoadedAt: Date | null;
  /** The stored counts, when they did not pack into a number (counts is NO_COUNTS then). */
  readonly promptTokens: PromptEntryTokens | null;
  /** The verdict and body tokens, when they did not pack into a number. */
  readonly unpacked?: { readonly scanVerdict: string | null; readonly body: number };
}

/**
 * Rare parts by entry. Looked up only for entries whose RARE bit is set, so a rendering that reads
 * a million entries asks it for the few that have any.
 */
const RARE_PARTS = new WeakMap<MirroredSkill, RareParts>();

/** Scan verdicts an entry holds as a number (packed with its body tokens); any other is a rare part. */
const VERDICTS: readonly (string | null)[] = [null, 'pass', 'warn'];
const VERDICT_BITS = 2;
const RARE = 1 << VERDICT_BITS;
const BODY_SHIFT = VERDICT_BITS + 1;
/**
 * Packed numbers stay under 2**30, so V8 holds them in the field itself (a small integer) on every
 * build, pointer compression or not.
 */
const BODY_LIMIT = 2 ** (30 - BODY_SHIFT);
/** Stored counts pack as xml (11 bits), markdown + 1 (11 bits) and listed (8 bits). */
const PART_BITS = 11;
const PART_LIMIT = 2 ** PART_BITS;
const LISTED_LIMIT = 2 ** 8;
/** counts when the entry has no stored counts packed (none stored, or held as a rare part). */
const NO_COUNTS = -1;

function packCounts(counts: PromptEntryTokens): number {
  const { xml, markdown, listed } = counts;
  const fits =
    [xml, markdown + 1, listed].every(Number.isSafeInteger) &&
    xml >= 0 &&
    xml < PART_LIMIT &&
    markdown >= -1 &&
    markdown + 1 < PART_LIMIT &&
    listed >= 0 &&
    listed < LISTED_LIMIT;
  return fits ? (xml * PART_LIMIT + markdown + 1) * LISTED_LIMIT + listed : NO_COUNTS;
}

/**
 * One skill of the copy, in four fields whatever the length of its description (a million of them
 * are held in every replica): the description is not kept (renderings ask describe() for the few they
 * list), the stored prompt counts are one number (the entry is its own PromptEntryTokens), the scan
 * verdict is packed with the body tokens, version strings are shared, and what few entries have
 * (loads among them) is kept beside the entry, in RARE_PARTS.
 */
class MirroredSkill implements AgentSkill, PromptEntryTokens {
  readonly name: string;
  readonly version: string;
  /** packCounts() of the stored counts, or NO_COUNTS. */
  private readonly counts: number;
  /** Body tokens << BODY_SHIFT | RARE when the entry has rare parts | index of the verdict in VERDICTS. */
  private readonly packed: number;

  constructor(entry: AgentCatalogueEntry, version: string, name: string) {
    this.name = name;
    this.version = version;
    const stored = entry.promptTokens;
    this.counts = stored ? packCounts(stored) : NO_COUNTS;
    const verdict = VERDICTS.indexOf(entry.scanVerdict);
    const body = entry.tokens.body;
    const packs = verdict >= 0 && Number.isSafeInteger(body) && body >= 0 && body < BODY_LIMIT;
    const rare =
      !stored ||
      this.counts === NO_COUNTS ||
      entry.disableModelInvocation !== null ||
      entry.loadCount !== 0 ||
      entry.lastLoadedAt !== null ||
      !packs;
    this.packed = (packs ? body * 2 ** BODY_SHIFT + verdict : 0) + (rare ? RARE : 0);
    if (rare) {
      RARE_PARTS.set(this, {
        description: stored ? undefined : entry.description,
        digest: stored ? undefined : entry.digest,
        disableModelInvocation: entry.disableModelInvocation,
        loadCount: entry.loadCount,
        lastLoadedAt: entry.lastLoadedAt,
        promptTokens: stored && this.counts === NO_COUNTS ? { ...stored } : null,
        unpacked: packs ? undefined : { scanVerdict: entry.scanVerdict, body },
      });
    }
  }

  private get rare(): RareParts | undefined {
    return (this.packed & RARE) === 0 ? undefined : RARE_PARTS.get(this);
  }

  get description(): string | undefined {
    return this.rare?.description;
  }

  get digest(): string | undefined {
    return this.rare?.digest;
  }

  get disableModelInvocation(): string | null {
    return this.rare?.disableModelInvocation ?? null;
  }

  get loadCount(): number {
    return this.rare?.loadCount ?? 0;
  }

  get lastLoadedAt(): Date | null {
    return this.rare?.lastLoadedAt ?? null;
  }

  /** 'pass', 'warn' or null. */
  get scanVerdict(): string | null {
    const unpacked = this.rare?.unpacked;
    return unpacked ? unpacked.scanVerdict : VERDICTS[this.packed % 2 ** VERDICT_BITS]!;
  }

  get tokens(): { body: number } {
    const unpacked = this.rare?.unpacked;
    return { body: unpacked ? unpacked.body : Math.floor(this.packed / 2 ** BODY_SHIFT) };
  }

  get promptTokens(): PromptEntryTokens | null {
    if (this.counts !== NO_COUNTS) return this;
    return this.rare?.promptTokens ?? null;
  }

  // PromptEntryTokens, read from the packed counts (only while promptTokens returns the entry).
  get xml(): number {
    return Math.floor(this.counts / (PART_LIMIT * LISTED_LIMIT));
  }

  get markdown(): number {
    return (Math.floor(this.counts / LISTED_LIMIT) % PART_LIMIT) - 1;
  }

  get listed(): number {
    return this.counts % LISTED_LIMIT;
  }
}

/** An entry of the copy made from a row as read (`version` and `name` the strings to hold). */
export function mirroredSkill(entry: AgentCatalogueEntry, version: string, name: string): AgentSkill {
  return new MirroredSkill(entry, version, name);
}

/** Entries read per batch while the copy is first made. */
const BATCH_SIZE = 5000;

export interface AgentCatalogueOptions {
  /**
   * Ask the database on every read (at least a catch-up statement), as when the read cache is off;
   * otherwise a read costs no statement while the copy is at the revisions the catalogue state knows.
   */
  alwaysCheck?: boolean;
  /** Another copy's string for a name (the search index's), held instead of the row's own. */
  sharedName?: (name: string) => string | undefined;
  /** Entries read per batch while the copy is first made (default 5,000). */
  batchSize?: number;
}

export class AgentCatalogueMirror implements AgentCatalogueSource {
  private heldSnapshot: CatalogueSnapshot | undefined;
  private closed = false;
  private readonly catchUps = new SerialCatchUp<CatalogueSnapshot>(() => this.catchUp());
  private readonly versions = new Interner();

  constructor(
    private readonly skills: CatalogueRepository,
    private readonly state: CatalogueState,
    /** The search's ranking in this namespace: names best first, for selections with `q`. */
    private readonly search: (query: { q: string; tag?: string }) => Promise<string[]>,
    private readonly options: AgentCatalogueOptions = {},
    readonly namespace: string = DEFAULT_NAMESPACE,
  ) {}

  /**
   * The selection's entries: by name, or with `q` the search's best matches, best first (narrowed to
   * `names` when both are given). `latest` comes from the copy, other tags from the database.
   */
  async agentCatalogue(query: AgentCatalogueQuery): Promise<AgentSkill[]> {
    const q = query.q?.trim();
    if (!q) return this.entries(query);
    const ranked = await this.search({ q, tag: query.tag });
    const wanted = query.names ? new Set(query.names) : undefined;
    const names = wanted ? ranked.filter((name) => wanted.has(name)) : ranked;
    const entries = await this.entries({ ...query, q: undefined, names });
    const rank = new Map(names.map((name, at) => [name, at]));
    return entries.sort((a, b) => rank.get(a.name)! - rank.get(b.name)!);
  }

  private async entries(query: AgentCatalogueQuery): Promise<AgentSkill[]> {
    if ((query.tag ?? LATEST) !== LATEST || this.closed) {
      return this.skills.agentCatalogue({ ...query, namespace: this.namespace });
    }
    if (query.names !== undefined && query.names.length === 0) return [];
    const { entries } = await this.snapshot();
    if (query.names === undefined) return entries as AgentSkill[];
    const found: AgentSkill[] = [];
    for (const name of new Set(query.names)) {
      const at = indexOf(entries, name);
      if (at >= 0) found.push(entries[at]!);
    }
    return found.sort(byName);
  }

  /**
   * Descriptions of skills of the copy, by name (PromptOptions.describe): versions are immutable, so
   * the description of the version an entry names is the one it had when the entry was read.
   */
  describe(skills: readonly Pick<AgentSkill, 'name' | 'version'>[]): Promise<Map<string, string>> {
    return this.skills.descriptionsOf(skills, this.namespace);
  }

  /**
   * The copy, at least as current as the catalogue state this process knows of for its namespace
   * (writes into other namespaces leave it as it is).
   */
  async snapshot(): Promise<CatalogueSnapshot> {
    const { loadsRevision } = await this.state.current();
    const target = { revision: this.state.namespaceRevision(this.namespace) ?? 0, loadsRevision };
    return this.catchUps.freshest(() =>
      !this.options.alwaysCheck && this.heldSnapshot && covers(this.heldSnapshot, target)
        ? this.heldSnapshot
        : undefined,
    );
  }

  /** Forgets the copy; later reads go to the database. */
  close(): void {
    this.closed = true;
    this.heldSnapshot = undefined;
  }

  private async catchUp(): Promise<CatalogueSnapshot> {
    const base = this.heldSnapshot;
    if (!base) return this.keep(await this.build());
    const delta = await this.skills.agentCatalogueSince(LATEST, base, this.namespace);
    const { runs, ...next } = applyDelta(base, { ...delta, entries: this.compact(delta.entries) });
    // What renderings read of every entry goes over from the last snapshot, not read again.
    followPromptColumns(base.entries, next.entries, runs);
    return this.keep(next);
  }

  /**
   * The whole copy, read in batches in one snapshot (the rows of a batch go as soon as its entries
   * are made), then put in name order. The next snapshot() catches up from the snapshot's revisions,
   * so whatever was written while the batches were read is read then.
   */
  private async build(): Promise<CatalogueSnapshot> {
    const entries: AgentSkill[] = [];
    let revisions: StateRevisions | undefined;
    const size = this.options.batchSize ?? BATCH_SIZE;
    await this.skills.agentCatalogueAll(LATEST, this.namespace, size, (page) => {
      revisions ??= { revision: page.revision, loadsRevision: page.loadsRevision };
      for (const entry of this.compact(page.entries)) entries.push(entry);
    });
    // By code point, as the database's "C" collation orders names: the order lookups assume.
    entries.sort(byName);
    return { ...(revisions ?? { revision: 0, loadsRevision: 0 }), entries };
  }

  private compact(entries: readonly AgentCatalogueEntry[]): AgentSkill[] {
    const shared = this.options.sharedName;
    return entries.map(
      (entry) =>
        new MirroredSkill(entry, this.versions.get(entry.version), shared?.(entry.name) ?? entry.name),
    );
  }

  private keep(snapshot: CatalogueSnapshot): CatalogueSnapshot {
    // Sorted by byName here: renderings need not check it again for each snapshot.
    markInNameOrder(snapshot.entries);
    if (!this.closed) this.heldSnapshot = snapshot;
    return snapshot;
  }
}

function covers(snapshot: StateRevisions, target: StateRevisions): boolean {
  return snapshot.revision >= target.revision && snapshot.loadsRevision >= target.loadsRevision;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Position of `name` in entries sorted by name, or -1. */
function indexOf(entries: readonly { name: string }[], name: string): number {
  let low = 0;
  let high = entries.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = entries[middle]!.name;
    if (at === name) return middle;
    if (at < name) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/**
 * The snapshot after `delta` (every skill changed since `base`, with its current entry or removed):
 * changed entries are replaced in a copy, removed ones dropped and new names merged in order. With
 * few new names it also says which runs of entries the two snapshots share (followPromptColumns).
 */
export function applyDelta(
  base: CatalogueSnapshot,
  delta: StateRevisions & { entries: readonly AgentSkill[]; removed: readonly string[] },
): CatalogueSnapshot & { runs?: SharedRun[] } {
  const revisions = {
    revision: Math.max(base.revision, delta.revision),
    loadsRevision: Math.max(base.loadsRevision, delta.loadsRevision),
  };
  if (delta.entries.length === 0 && delta.removed.length === 0)
    return { ...revisions, entries: base.entries };
  const entries = base.entries.slice() as (AgentSkill | undefined)[];
  const added: AgentSkill[] = [];
  /** Positions in base whose entry was replaced or removed. */
  const changed = new Set<number>();
  let dropped = 0;
  for (const entry of delta.entries) {
    const at = indexOf(base.entries, entry.name);
    if (at >= 0) {
      entries[at] = entry;
      changed.add(at);
    } else added.push(entry);
  }
  for (const name of delta.removed) {
    const at = indexOf(base.entries, name);
    if (at >= 0 && entries[at] !== undefined) {
      entries[at] = undefined;
      changed.add(at);
      dropped += 1;
    }
  }
  const kept = (dropped === 0 ? entries : entries.filter((entry) => entry !== undefined)) as AgentSkill[];
  const shared = (insertions: readonly number[]) =>
    sharedRuns(
      base.entries.length,
      [...changed].sort((a, b) => a - b),
      (at) => entries[at] === undefined,
      insertions,
    );
  if (added.length === 0) return { ...revisions, entries: kept, runs: shared([]) };
  added.sort(byName);
  if (added.length <= FEW_ADDED) {
    // A publish adds a name or two to a catalogue of up to a million: each goes where a binary search
    // puts it, and the runs between are copied whole rather than compared name by name.
    const parts: AgentSkill[][] = [];
    const insertions: number[] = [];
    let from = 0;
    for (const entry of added) {
      const at = insertionPoint(kept, entry.name, from);
      parts.push(kept.slice(from, at), [entry]);
      insertions.push(at);
      from = at;
    }
    parts.push(kept.slice(from));
    return { ...revisions, entries: ([] as AgentSkill[]).concat(...parts), runs: shared(insertions) };
  }
  const merged: AgentSkill[] = [];
  let next = 0;
  for (const entry of kept) {
    while (next < added.length && added[next]!.name < entry.name) merged.push(added[next++]!);
    merged.push(entry);
  }
  while (next < added.length) merged.push(added[next++]!);
  return { ...revisions, entries: merged };
}

/**
 * The runs of base's entries that the next snapshot holds unchanged, in order: base less the positions
 * `changed` (sorted; replaced, or removed as `removedAt` says), then shifted by the new entries
 * inserted before each position of what was kept (`insertions`, ascending).
 */
function sharedRuns(
  baseLength: number,
  changed: readonly number[],
  removedAt: (at: number) => boolean,
  insertions: readonly number[],
): SharedRun[] {
  const runs: SharedRun[] = [];
  let removedBefore = 0;
  let inserted = 0;
  let start = 0;
  const share = (from: number, length: number) => {
    let keptAt = from - removedBefore;
    let baseAt = from;
    let left = length;
    while (left > 0) {
      // A new entry inserted at a kept position goes before the entry there.
      while (inserted < insertions.length && insertions[inserted]! <= keptAt) inserted += 1;
      const insertion = insertions[inserted];
      const taken = insertion !== undefined && insertion < keptAt + left ? insertion - keptAt : left;
      runs.push({ to: keptAt + inserted, from: baseAt, length: taken });
      keptAt += taken;
      baseAt += taken;
      left -= taken;
    }
  };
  for (const at of [...changed, baseLength]) {
    if (at > start) share(start, at - start);
    if (at < baseLength && removedAt(at)) removedBefore += 1;
    start = at + 1;
  }
  return runs;
}

/** New names a delta merges by binary search (more are merged in one pass over the entries). */
const FEW_ADDED = 64;

/** The first position at or after `from` in entries sorted by name whose name sorts after `name`. */
function insertionPoint(entries: readonly { name: string }[], name: string, from: number): number {
  let low = from;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (entries[middle]!.name < name) low = middle + 1;
    else high = middle;
  }
  return low;
}
