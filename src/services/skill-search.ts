import type { CatalogueState } from '../cache/catalogue-state.js';
import { SearchMirror } from '../cache/search-mirror.js';
import { BadRequestError } from '../errors.js';
import { DEFAULT_TOOL_LIMIT, MAX_TOOL_LIMIT } from '../render/tools.js';
import type { Field } from '../search/document.js';
import type { MatchedTerm } from '../search/search-index.js';
import type { CatalogueItem, CatalogueRepository } from '../storage/catalogue-repository.js';
import { LATEST } from '../storage/records.js';
import type { SearchRepository } from '../storage/search-repository.js';
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

/** Tags other than `latest` whose indexes are kept at once (each is built when first searched). */
const MAX_TAG_INDEXES = 8;

/** Why a skill matched, per field: the request's words found there. */
export interface SearchMatch {
  score: number;
  /** One line for a model or a person: `name: playwright; description: flaky, tests; spelling: clustr→cluster`. */
  why: string;
  fields: Partial<Record<Field, string[]>>;
  /** Words of the request the index did not know, and the spelling they were read as. */
  corrected: { word: string; as: string }[];
  /** Words of the request after which agents loaded this skill before (a learned boost). */
  learned: string[];
}

export interface SearchHit {
  name: string;
  version: string;
  match: SearchMatch;
}

/** One result of search_skills. */
export interface ModelSearchResult {
  name: string;
  description: string;
  version: string;
  why: string;
  score: number;
}

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
  private readonly latest: SearchMirror;
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
    this.latest = new SearchMirror(repository, state, LATEST, options);
    this.feedback = new SearchFeedback(repository);
  }

  /** Builds the `latest` index now, so the first search after a start does not wait for it. */
  async warm(): Promise<void> {
    this.warmingNow = true;
    try {
      await Promise.all([this.latest.warm(), this.feedback.sync()]);
    } finally {
      this.warmingNow = false;
    }
  }

  /** True while warm() builds the index (GET /readyz answers 503 meanwhile). */
  get warming(): boolean {
    return this.warmingNow;
  }

  /** Ranked hits, best first, and whether more follow the ones answered. */
  async search(request: SearchRequest): Promise<{ hits: SearchHit[]; more: boolean }> {
    const query = checkedQuery(request.query);
    const offset = request.offset ?? 0;
    const { index, versions, flagged } = await this.mirror(request.tag ?? LATEST).snapshot();
    const forModel = request.forModel === true;
    const found = index.search(query, {
      limit: offset + request.limit + 1,
      learned: (term) => this.feedback.loadsAfter(term),
      accept: (name) =>
        versions.has(name) &&
        (!forModel || isModelInvocable({ 'disable-model-invocation': flagged.get(name) ?? null })),
    });
    const hits = found.slice(offset, offset + request.limit).map((hit) => ({
      name: hit.name,
      version: versions.get(hit.name)!,
      match: describeMatch(hit.score, hit.matched, hit.learned),
    }));
    return { hits, more: found.length > offset + request.limit };
  }

  /**
   * What the search_skills tool answers a model (GET /tools and MCP alike): the best matches a model
   * may load, each with its description and why it matched. Every name is one load_skill accepts.
   */
  async searchSkills(request: {
    query: string;
    limit?: number;
    tag?: string;
    /** Who asked (clientKey): a later load by the same client teaches the ranking. */
    client?: string;
  }): Promise<ModelSearchResult[]> {
    const limit = Math.min(Math.max(request.limit ?? DEFAULT_TOOL_LIMIT, 1), MAX_TOOL_LIMIT);
    const tag = request.tag ?? LATEST;
    const { hits } = await this.search({ query: request.query, limit, tag, forModel: true });
    const items = await this.catalogue.itemsOf(
      tag,
      hits.map((hit) => hit.name),
    );
    const descriptions = new Map(items.map((item) => [item.name, item.description]));
    if (request.client !== undefined)
      this.feedback.noteSearch(
        request.client,
        request.query,
        hits.map((hit) => hit.name),
      );
    return hits.flatMap((hit) => {
      const description = descriptions.get(hit.name);
      return description === undefined
        ? []
        : [{ name: hit.name, description, version: hit.version, why: hit.match.why, score: hit.match.score }];
    });
  }

  /**
   * The names a prompt or tools selection with `q` takes (GET /prompt?q=, GET /tools?q=): the best
   * PROMPT_SEARCH_LIMIT matches, best first.
   */
  async rankedNames(query: { q: string; tag?: string }): Promise<string[]> {
    const { hits } = await this.search({ query: query.q, tag: query.tag, limit: PROMPT_SEARCH_LIMIT });
    return hits.map((hit) => hit.name);
  }

  /** A catalogue page of search results (GET /skills?q=): items in rank order, each with its match. */
  async cataloguePage(query: {
    q: string;
    tag?: string;
    limit: number;
    cursor?: string;
  }): Promise<{ items: (CatalogueItem & { match: SearchMatch })[]; nextCursor: string | null }> {
    const offset = decodeSearchCursor(query.cursor);
    const tag = query.tag ?? LATEST;
    const { hits, more } = await this.search({ query: query.q, limit: query.limit, offset, tag });
    const items = await this.catalogue.itemsOf(
      tag,
      hits.map((hit) => hit.name),
    );
    const byName = new Map(items.map((item) => [item.name, item]));
    const ranked = hits.flatMap((hit) => {
      const item = byName.get(hit.name);
      return item ? [{ ...item, match: hit.match }] : [];
    });
    return { items: ranked, nextCursor: more ? encodeSearchCursor(offset + query.limit) : null };
  }

  /** A search a client ran (a face that answers from a cache tells it here), best first. */
  noteSearch(client: string, query: string, names: readonly string[]): void {
    this.feedback.noteSearch(client, query, names);
  }

  /** A layer-2 load of `skill` by `client` (clientKey): teaches the client's recent searches. */
  noteLoad(client: string, skill: string): void {
    this.feedback.noteLoad(client, skill);
  }

  async close(): Promise<void> {
    await this.feedback.close();
    this.latest.close();
    for (const mirror of this.tagged.values()) mirror.close();
    this.tagged.clear();
  }

  private mirror(tag: string): SearchMirror {
    if (tag === LATEST) return this.latest;
    let mirror = this.tagged.get(tag);
    if (mirror) {
      this.tagged.delete(tag);
      this.tagged.set(tag, mirror); // most recently used last
      return mirror;
    }
    mirror = new SearchMirror(this.repository, this.state, tag, this.options);
    this.tagged.set(tag, mirror);
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
  for (const term of matched) {
    for (const field of FIELD_ORDER) {
      if (!term.fields.includes(field)) continue;
      const words = fields[field];
      if (!words) fields[field] = [term.query];
      else if (!words.includes(term.query)) words.push(term.query);
    }
    if (term.corrected) corrected.push({ word: term.query, as: term.term });
  }
  const parts = FIELD_ORDER.flatMap((field) =>
    fields[field] ? [`${field}: ${fields[field].join(', ')}`] : [],
  );
  if (corrected.length > 0)
    parts.push(`spelling: ${corrected.map(({ word, as }) => `${word}→${as}`).join(', ')}`);
  if (learned.length > 0) parts.push(`loaded by agents after searching: ${learned.join(', ')}`);
  return {
    score: Math.round(score * 1000) / 1000,
    why: parts.join('; '),
    fields,
    corrected,
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
