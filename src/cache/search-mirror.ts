import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import { ANALYZER_VERSION, encodeTerms, isCurrentTerms, searchDocument } from '../search/document.js';
import { SearchIndex } from '../search/search-index.js';
import { LATEST } from '../storage/records.js';
import type { SearchRepository, SearchRow } from '../storage/search-repository.js';
import type { CatalogueState } from './catalogue-state.js';
import { Interner } from './interner.js';
import { SerialCatchUp } from './serial-catch-up.js';

/** Skills read per batch while the index is first built. */
const BATCH_SIZE = 2000;

type StoredTerms = { versionId: string; searchTerms: string };

/**
 * An index and the skills it holds, at a catalogue revision. The index keeps the version the tag
 * points at with each skill (SearchIndex.versionOf), so it holds exactly the skills the tag has.
 */
export interface SearchSnapshot {
  revision: number;
  index: SearchIndex;
  /** Skills whose frontmatter sets `disable-model-invocation` (to any value: visibility decides). */
  flagged: ReadonlyMap<string, string>;
}

/**
 * The search index of one dist-tag's versions, in this process's memory, kept current by reading
 * only the skills written since the revision it holds (like the agent catalogue mirror). `latest` is
 * kept for the life of the process; other tags are built when asked and dropped at the next write.
 *
 * Versions stored before their terms were (or with another analyzer version) are analysed from their
 * text as they are read, and their terms stored, so the next start reads them ready.
 */
export class SearchMirror {
  private held: SearchSnapshot | undefined;
  private closed = false;
  private readonly catchUps = new SerialCatchUp<SearchSnapshot>(() => this.catchUp());
  private readonly versionStrings = new Interner();

  constructor(
    private readonly repository: SearchRepository,
    private readonly state: CatalogueState,
    readonly namespace: string = DEFAULT_NAMESPACE,
    readonly tag: string = LATEST,
    private readonly options: { alwaysCheck?: boolean } = {},
  ) {}

  /**
   * The index, at least as current as the catalogue state this process knows of for its namespace
   * (a write into another namespace leaves it as it is). With `alwaysCheck` every call asks the
   * database, unless `deferCheck`: the caller compares the snapshot's revision with one read in a
   * statement it makes anyway, and asks again without it when they differ.
   */
  async snapshot(options: { deferCheck?: boolean } = {}): Promise<SearchSnapshot> {
    await this.state.current();
    const target = this.state.namespaceRevision(this.namespace) ?? 0;
    const check = this.options.alwaysCheck === true && options.deferCheck !== true;
    return this.catchUps.freshest(() =>
      !check && this.held && this.held.revision >= target ? this.held : undefined,
    );
  }

  /** The index's string for a skill's name, when it holds the skill (see SearchIndex.sharedName). */
  sharedName(name: string): string | undefined {
    return this.held?.index.sharedName(name);
  }

  /** What the index holds, once built (for sizing: the benches). */
  stats(): ReturnType<SearchIndex['stats']> | undefined {
    return this.held?.index.stats();
  }

  /** Builds the index now (at start), so the first search does not wait for it. */
  warm(): Promise<SearchSnapshot> {
    return this.snapshot();
  }

  close(): void {
    this.closed = true;
    this.held = undefined;
  }

  private async catchUp(): Promise<SearchSnapshot> {
    const base = this.held;
    if (!base) return this.keep(await this.build());
    const delta = await this.repository.since(this.tag, base.revision, ANALYZER_VERSION, this.namespace);
    if (delta.rows.length === 0 && delta.removed.length === 0) {
      return this.keep({ ...base, revision: Math.max(base.revision, delta.revision) });
    }
    // Changed in place: a search reads the index and the map without yielding.
    const flagged = base.flagged as Map<string, string>;
    for (const name of delta.removed) {
      base.index.remove(name);
      flagged.delete(name);
    }
    await this.putAll(base.index, flagged, delta.rows);
    return this.keep({ ...base, revision: Math.max(base.revision, delta.revision) });
  }

  private async build(): Promise<SearchSnapshot> {
    const index = new SearchIndex();
    const flagged = new Map<string, string>();
    const made: StoredTerms[] = [];
    let revision: number | undefined;
    await this.repository.all(this.tag, ANALYZER_VERSION, this.namespace, BATCH_SIZE, async (page) => {
      // Writes committed while the batches are read are caught up from the snapshot's revision.
      revision ??= page.revision;
      made.push(...this.putRows(index, flagged, page.rows));
      await yieldToEventLoop();
    });
    index.trim();
    await this.store(made);
    return { revision: revision ?? 0, index, flagged };
  }

  private async putAll(index: SearchIndex, flagged: Map<string, string>, rows: SearchRow[]): Promise<void> {
    await this.store(this.putRows(index, flagged, rows));
  }

  /** Puts rows into the index; answers the terms it had to make (rows stored without current ones). */
  private putRows(index: SearchIndex, flagged: Map<string, string>, rows: SearchRow[]): StoredTerms[] {
    const made: StoredTerms[] = [];
    for (const row of rows) {
      const stored = row.searchTerms;
      const version = this.versionStrings.get(row.version);
      if (row.disableModelInvocation === null) flagged.delete(row.name);
      else flagged.set(row.name, row.disableModelInvocation);
      if (stored !== null && isCurrentTerms(stored)) {
        index.putStored(row.name, stored, version);
        continue;
      }
      const { terms } = searchDocument({
        name: row.name,
        description: row.description ?? '',
        body: row.body ?? '',
      });
      made.push({ versionId: row.versionId, searchTerms: encodeTerms(terms) });
      index.put({ name: row.name, terms }, version);
    }
    return made;
  }

  /** Stores terms made for older versions, so the next start reads them ready. */
  private async store(made: StoredTerms[]): Promise<void> {
    // Best effort: the terms are made again at the next start if this fails.
    for (let start = 0; start < made.length; start += BATCH_SIZE) {
      await this.repository.storeTerms(made.slice(start, start + BATCH_SIZE)).catch(() => undefined);
    }
  }

  private keep(snapshot: SearchSnapshot): SearchSnapshot {
    if (!this.closed) this.held = snapshot;
    return snapshot;
  }
}
