import type { CatalogueState } from '../cache/catalogue-state.js';
import { SearchMirror } from '../cache/search-mirror.js';
import { BadRequestError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE, layersOf, type Scope, skillKey } from '../domain/scope.js';
import { DEFAULT_TOOL_LIMIT, MAX_TOOL_LIMIT } from '../render/tool-definitions.js';
import type { Field } from '../search/document.js';
import type { MatchedTerm } from '../search/search-index.js';
import type { CatalogueItem, CatalogueRepository } from '../storage/catalogue-repository.js';
import { LATEST } from '../storage/records.js';
import type { SearchRepository } from '../storage/search-repository.js';
import type { SearchResult, SearchMatch as WireSearchMatch } from '../wire/types.js';
import { SearchFeedback } from './search-feedback.js';
import { isModelInvocable } from './visibility.js';

/**
 * Requests up to this many characters are searched (a paragraph of context included); longer ones are
 * refused, since only the rarest words of a request count (search-index.ts) and a URL has limits.
 */
export const MAX_QUERY_LENGTH = 4000;

/** Most results one search answers (search_skills, and one catalogue page). */
export const MAX_SEARCH_LIMIT = 500;

/** Skills a prompt or tools selection by `q` takes: the best matches of a search, as a person would pick. */
export const PROMPT_SEARCH_LIMIT = 50;

/**
 * Indexes of tags other than `latest` kept at once, over every namespace (each is built when first
 * searched); every namespace's `latest` index is kept for the life of the process.
 */
const MAX_TAG_INDEXES = 8;

/** Why a skill matched a search (the wire's searchMatchSchema). */
export type SearchMatch = WireSearchMatch;

export interface SearchHit {
  name: string;
  version: string;
  /** The namespace the hit is in (in a view: the layer the name resolves to). */
  namespace: string;
  match: SearchMatch;
}

/** One result of search_skills and GET /search (the wire's searchResultSchema). */
export type ModelSearchResult = SearchResult;

/** Results search_skills answers when the model names no limit, and the most it may ask for. */
export { DEFAULT_TOOL_LIMIT, MAX_TOOL_LIMIT };

export interface SearchRequest {
  query: string;
  limit: number;
  offset?: number;
  tag?: string;
  /** Model-facing search leaves out skills with `disable-model-invocation: true`, as the prompt does. */
  forModel?: boolean;
}

/**
 * Search over the registry's skills, the one ranking behind GET /skills?q=, GET /prompt?q=, the
 * search_skills tool (GET /tools, MCP) and every other face that searches: BM25F over name,
 * description, headings and body (src/search), read from an index in memory.
 */
export class SkillSearchService {
  /** Each namespace's `latest` index, by namespace. */
  private readonly latest = new Map<string, SearchMirror>();
  /** Other tags' indexes, by `namespace|tag`, least recently used first. */
  private readonly tagged = new Map<string, SearchMirror>();
  /** What agents loaded after searching: a ranking signal only the registry has. */
  readonly feedback: SearchFeedback;
  private warmingNow = false;

  constructor(
    private readonly repository: SearchRepository,
    private readonly catalogue: CatalogueRepository,
    private readonly state: CatalogueState,
    private readonly options: { alwaysCheck?: boolean } = {},
  ) {
    this.feedback = new SearchFeedback(repository);
  }

  /** Builds the `latest` index of `default` now, so the first search after a start does not wait for it. */
  async warm(): Promise<void> {
    this.warmingNow = true;
    try {
      await Promise.all([this.mirror(DEFAULT_NAMESPACE, LATEST).warm(), this.feedback.sync()]);
    } finally {
      this.warmingNow = false;
    }
  }

  /**
   * The `latest` index's string for a skill's name in a namespace, when it holds one: the agent
   * catalogue's copy keeps that string rather than a second one (a name each for 100,000 skills).
   */
  sharedName(namespace: string, name: string): string | undefined {
    return this.latest.get(namespace)?.sharedName(name);
  }

  /** What a namespace's `latest` index holds, once built (for sizing: the benches). */
  indexStats(namespace: string): ReturnType<SearchMirror['stats']> {
    return this.latest.get(namespace)?.stats();
  }

  /** True while warm() builds the index (GET /readyz answers 503 meanwhile). */
  get warming(): boolean {
    return this.warmingNow;
  }

  /**
   * Ranked hits, best first, and whether more follow the ones answered. In a view every layer's
   * index is searched, each counting only the names it wins (the highest layer the tag has a version
   * of the name in), and the hits are merged by score.
   */
  async search(
    scope: Scope,
    request: SearchRequest,
    options: { deferCheck?: boolean } = {},
  ): Promise<{ hits: SearchHit[]; more: boolean; revision: number }> {
    const query = checkedQuery(request.query);
    const offset = request.offset ?? 0;
    const tag = request.tag ?? LATEST;
    const layers = layersOf(scope);
    const snapshots = await Promise.all(
      layers.map((namespace) => this.mirror(namespace, tag).snapshot(options)),
    );
    const forModel = request.forModel === true;
    const wins = (layer: number, name: string) => {
      for (let above = snapshots.length - 1; above > layer; above--) {
        if (snapshots[above]!.index.has(name)) return false;
      }
      return true;
    };
    const found: (SearchHit & { score: number })[] = [];
    snapshots.forEach(({ index, flagged }, layer) => {
      const namespace = layers[layer]!;
      for (const hit of index.search(query, {
        limit: offset + request.limit + 1,
        learned: this.learnedIn(namespace),
        accept: (name) =>
          (!forModel || isModelInvocable({ 'disable-model-invocation': flagged.get(name) ?? null })) &&
          wins(layer, name),
      })) {
        found.push({
          name: hit.name,
          version: index.versionOf(hit.name)!,
          namespace,
          score: hit.score,
          match: describeMatch(hit.score, hit.matched, hit.learned),
        });
      }
    });
    if (snapshots.length > 1)
      found.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const hits = found.slice(offset, offset + request.limit).map(({ score: _score, ...hit }) => hit);
    const revision = Math.min(...snapshots.map((snapshot) => snapshot.revision));
    return { hits, more: found.length > offset + request.limit, revision };
  }

  /**
   * A search and the catalogue items of its hits. With the read cache off every search asks the
   * database; here the question rides on the items' statement, which reads the catalogue revision
   * too: only when a write came in after the index was caught up is the search made again, checked.
   */
  private async searchWithItems(
    scope: Scope,
    request: SearchRequest,
  ): Promise<{ hits: SearchHit[]; more: boolean; items: Map<string, CatalogueItem> }> {
    const tag = request.tag ?? LATEST;
    const deferCheck = this.options.alwaysCheck === true;
    let found = await this.search(scope, request, { deferCheck });
    let read = await this.itemsOf(tag, found.hits);
    if (deferCheck && (read.revision === undefined || read.revision > found.revision)) {
      found = await this.search(scope, request);
      read = await this.itemsOf(tag, found.hits);
    }
    return { hits: found.hits, more: found.more, items: read.items };
  }

  /**
   * What the search_skills tool answers a model (GET /tools and MCP alike): the best matches a model
   * may load, each with its description and why it matched. Every name is one load_skill accepts.
   */
  async searchSkills(
    scope: Scope,
    request: {
      query: string;
      limit?: number;
      tag?: string;
      /** Who asked (clientKey): a later load by the same client teaches the ranking. */
      client?: string;
    },
  ): Promise<ModelSearchResult[]> {
    const limit = Math.min(Math.max(request.limit ?? DEFAULT_TOOL_LIMIT, 1), MAX_TOOL_LIMIT);
    const tag = request.tag ?? LATEST;
    const { hits, items } = await this.searchWithItems(scope, {
      query: request.query,
      limit,
      tag,
      forModel: true,
    });
    if (request.client !== undefined)
      this.feedback.noteSearch(
        request.client,
        request.query,
        hits.map((hit) => skillKey(hit.namespace, hit.name)),
      );
    return hits.flatMap((hit) => {
      const description = items.get(skillKey(hit.namespace, hit.name))?.description;
      if (description === undefined) return [];
      const result = {
        name: hit.name,
        description,
        version: hit.version,
        why: hit.match.why,
        score: hit.match.score,
      };
      return [scope.kind === 'view' ? { ...result, namespace: hit.namespace } : result];
    });
  }

  /**
   * The names a prompt or tools selection with `q` takes (GET /prompt?q=, GET /tools?q=): the best
   * PROMPT_SEARCH_LIMIT matches, best first.
   */
  async rankedNames(scope: Scope, query: { q: string; tag?: string }): Promise<string[]> {
    const { hits } = await this.search(scope, { query: query.q, tag: query.tag, limit: PROMPT_SEARCH_LIMIT });
    return hits.map((hit) => hit.name);
  }

  /**
   * The skills of a namespace's `latest` whose text best matches `words` as written (no corrected
   * spellings, related words or learned loads), best first, with their descriptions: the candidates of
   * the shadowing check. The index holds exactly what `latest` serves; the descriptions are read in one
   * planned statement of what `latest` points at (the indexed version, or one published since).
   */
  async literalMatches(
    namespace: string,
    words: string,
    limit: number,
  ): Promise<{ name: string; description: string }[]> {
    const { index } = await this.mirror(namespace, LATEST).snapshot();
    const names = index.search(words, { limit, literal: true }).map((hit) => hit.name);
    if (names.length === 0) return [];
    // What `latest` points at now: the version the index holds, or one published since.
    const descriptions = await this.catalogue.taggedDescriptionsOf(names, namespace, LATEST);
    return names.flatMap((name) => {
      const description = descriptions.get(name);
      return description === undefined ? [] : [{ name, description }];
    });
  }

  /** A catalogue page of search results (GET /skills?q=): items in rank order, each with its match. */
  async cataloguePage(
    scope: Scope,
    query: {
      q: string;
      tag?: string;
      limit: number;
      cursor?: string;
    },
  ): Promise<{
    items: (CatalogueItem & { match: SearchMatch; namespace?: string })[];
    nextCursor: string | null;
  }> {
    const offset = decodeSearchCursor(query.cursor);
    const tag = query.tag ?? LATEST;
    const { hits, more, items } = await this.searchWithItems(scope, {
      query: query.q,
      limit: query.limit,
      offset,
      tag,
    });
    const ranked = hits.flatMap((hit) => {
      const item = items.get(skillKey(hit.namespace, hit.name));
      if (!item) return [];
      return [
        scope.kind === 'view'
          ? { ...item, namespace: hit.namespace, match: hit.match }
          : { ...item, match: hit.match },
      ];
    });
    return { items: ranked, nextCursor: more ? encodeSearchCursor(offset + query.limit) : null };
  }

  /**
   * The catalogue items of hits, by skill key, read per namespace, and the newest catalogue revision
   * the statements read (undefined without hits: no statement).
   */
  private async itemsOf(
    tag: string,
    hits: readonly SearchHit[],
  ): Promise<{ items: Map<string, CatalogueItem>; revision: number | undefined }> {
    const byNamespace = new Map<string, string[]>();
    for (const hit of hits) {
      const names = byNamespace.get(hit.namespace);
      if (names) names.push(hit.name);
      else byNamespace.set(hit.namespace, [hit.name]);
    }
    const items = new Map<string, CatalogueItem>();
    let revision: number | undefined;
    await Promise.all(
      [...byNamespace].map(async ([namespace, names]) => {
        const read = await this.catalogue.itemsOf(tag, names, namespace);
        for (const item of read.items) items.set(skillKey(namespace, item.name), item);
        if (read.revision !== undefined) revision = Math.max(revision ?? read.revision, read.revision);
      }),
    );
    return { items, revision };
  }

  /**
   * What agents loaded after searching each term, for one namespace's index: feedback is kept by
   * skill key (src/domain/scope.ts), the index by name.
   */
  private learnedIn(namespace: string): (term: string) => ReadonlyMap<string, number> | undefined {
    if (namespace === DEFAULT_NAMESPACE) return (term) => this.feedback.loadsAfter(term);
    const prefix = `${namespace}/`;
    return (term) => {
      const loads = this.feedback.loadsAfter(term);
      if (!loads) return undefined;
      const mine = new Map<string, number>();
      for (const [key, count] of loads) {
        if (key.startsWith(prefix)) mine.set(key.slice(prefix.length), count);
      }
      return mine.size > 0 ? mine : undefined;
    };
  }

  /** A search a client ran (a face that answers from a cache tells it here), best first. */
  noteSearch(client: string, query: string, names: readonly string[]): void {
    this.feedback.noteSearch(client, query, names);
  }

  /** A layer-2 load of `skill` by `client` (clientKey): teaches the client's recent searches. */
  noteLoad(client: string, skill: string): void {
    this.feedback.noteLoad(client, skill);
  }

  /** Forgets a deleted namespace's indexes (a namespace made again under its name starts afresh). */
  drop(namespace: string): void {
    this.latest.get(namespace)?.close();
    this.latest.delete(namespace);
    for (const [key, mirror] of this.tagged) {
      if (key.startsWith(`${namespace}|`)) {
        mirror.close();
        this.tagged.delete(key);
      }
    }
  }

  async close(): Promise<void> {
    await this.feedback.close();
    for (const mirror of this.latest.values()) mirror.close();
    this.latest.clear();
    for (const mirror of this.tagged.values()) mirror.close();
    this.tagged.clear();
  }

  private mirror(namespace: string, tag: string): SearchMirror {
    if (tag === LATEST) {
      let mirror = this.latest.get(namespace);
      if (!mirror) {
        mirror = new SearchMirror(this.repository, this.state, namespace, LATEST, this.options);
        this.latest.set(namespace, mirror);
      }
      return mirror;
    }
    const key = `${namespace}|${tag}`;
    let mirror = this.tagged.get(key);
    if (mirror) {
      this.tagged.delete(key);
      this.tagged.set(key, mirror); // most recently used last
      return mirror;
    }
    mirror = new SearchMirror(this.repository, this.state, namespace, tag, this.options);
    this.tagged.set(key, mirror);
    if (this.tagged.size > MAX_TAG_INDEXES) {
      const [oldest] = this.tagged.keys();
      this.tagged.get(oldest!)!.close();
      this.tagged.delete(oldest!);
    }
    return mirror;
  }
}

/** The query as searched (trimmed), or a 400 saying why it cannot be: empty, or over MAX_QUERY_LENGTH. */
export function checkedQuery(query: string): string {
  const trimmed = query.trim();
  if (trimmed === '') {
    throw new BadRequestError('the search query is empty; describe the task in a few words', {
      parameter: 'q',
    });
  }
  if (trimmed.length > MAX_QUERY_LENGTH) {
    throw new BadRequestError(
      `the search query is ${trimmed.length} characters; at most ${MAX_QUERY_LENGTH} are searched, so shorten it to the task and its key details`,
      { parameter: 'q' },
    );
  }
  return trimmed;
}

const FIELD_ORDER: readonly Field[] = ['name', 'description', 'headings', 'body'];

/** The match of one hit, for people and models: the request's words in each field holding them. */
export function describeMatch(
  score: number,
  matched: readonly MatchedTerm[],
  learned: readonly string[] = [],
): SearchMatch {
  const fields: Partial<Record<Field, string[]>> = {};
  const corrected: { word: string; as: string }[] = [];
  const related: { word: string; as: string }[] = [];
  for (const term of matched) {
    // A related word is listed as the skill has it: the request's phrase is named under `related`.
    const shown = term.related ?? term.query;
    for (const field of FIELD_ORDER) {
      if (!term.fields.includes(field)) continue;
      const words = fields[field];
      if (!words) fields[field] = [shown];
      else if (!words.includes(shown)) words.push(shown);
    }
    if (term.corrected) corrected.push({ word: term.query, as: term.term });
    if (term.related !== undefined) related.push({ word: term.query, as: term.related });
  }
  const parts = FIELD_ORDER.flatMap((field) =>
    fields[field] ? [`${field}: ${fields[field].join(', ')}`] : [],
  );
  if (corrected.length > 0)
    parts.push(`spelling: ${corrected.map(({ word, as }) => `${word}→${as}`).join(', ')}`);
  if (related.length > 0) parts.push(`related: ${related.map(({ word, as }) => `${word}→${as}`).join(', ')}`);
  if (learned.length > 0) parts.push(`loaded by agents after searching: ${learned.join(', ')}`);
  return {
    score: Math.round(score * 1000) / 1000,
    why: parts.join('; '),
    fields,
    corrected,
    related,
    learned: [...learned],
  };
}

function encodeSearchCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64url');
}

function decodeSearchCursor(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { offset?: unknown };
    if (typeof cursor.offset === 'number' && Number.isInteger(cursor.offset) && cursor.offset >= 0)
      return cursor.offset;
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError(
    'cursor is not one this registry issued for this query; pass the nextCursor value of the previous page unchanged, with the same q',
    { parameter: 'cursor' },
  );
}
