import type { AgentCatalogues, ScopedCatalogue } from '../cache/agent-catalogues.js';
import { measured } from '../cache/read-cache.js';
import { layersOf, type Scope } from '../domain/scope.js';
import {
  type CatalogueItem,
  type CatalogueRepository,
  encodeCatalogueCursor,
} from '../storage/catalogue-repository.js';
import { LATEST } from '../storage/records.js';
import type { CachedReads } from './cached-read.js';
import type { SearchMatch, SkillSearchService } from './skill-search.js';
import { isModelInvocable, userInvocable } from './visibility.js';

/**
 * Who a listing is for (services/visibility.ts): `model` leaves out `disable-model-invocation: true`
 * (the prompt, tools, MCP list_skills), `people` leaves out `user-invocable: false` (MCP resources),
 * `everyone` keeps every listed skill (GET /skills, the discovery index, the vendor faces).
 */
export type Audience = 'everyone' | 'model' | 'people';

export interface ListingQuery {
  /** Search words: the search's ranking, best first, each item with its match. */
  q?: string;
  /** The dist-tag listed (default latest). */
  tag?: string;
  limit: number;
  /** nextCursor of the page before. */
  cursor?: string;
  /** Default everyone. */
  audience?: Audience;
}

/** A skill as every listing hands it: its version under the tag, in a view the layer it comes from. */
export type ListedSkill = CatalogueItem & { match?: SearchMatch; namespace?: string };

export interface ListingPage {
  items: ListedSkill[];
  nextCursor: string | null;
}

/** Catalogue entries read per page when a face wants more than one page at once (the REST maximum). */
export const LISTING_PAGE = 500;

const VISIBLE: Record<Audience, (frontmatter: Record<string, unknown>) => boolean> = {
  everyone: () => true,
  model: isModelInvocable,
  people: userInvocable,
};

/**
 * The one listing of skills, for every face: REST (GET /skills), MCP (list_skills, resources, the
 * skills extension), the discovery index, the vendor Skills APIs, and (through the agent catalogues
 * it owns) GET /prompt and GET /tools. What is listed (a tagged version neither yanked nor in
 * quarantine, a released `block` included: CatalogueRepository's listedVersion), which layer of a view wins a name, search
 * ranking and who may see a skill are decided here; a face only maps items to its wire.
 * Pages are kept per scope revision.
 */
export class SkillListing {
  constructor(
    private readonly catalogue: CatalogueRepository,
    private readonly search: SkillSearchService,
    private readonly reads: CachedReads,
    /** The agent catalogues in memory (one copy per namespace, views merged over them). */
    readonly catalogues: AgentCatalogues,
  ) {}

  /**
   * One page: by name, or with `q` by rank; items the audience may not see are left out. Kept for
   * the scope's revision.
   */
  async page(scope: Scope, query: ListingQuery): Promise<ListingPage> {
    const read = await this.reads.of({ read: 'listing', on: { kind: 'scope', scope }, shape: [query] });
    return read.value(async () => measured(await this.visiblePage(scope, query)));
  }

  /**
   * Items from `cursor` on, a page at a time, until `wanted` are read; the cursor of the rest when
   * there is more (faces that answer more than one page in one call). A cursor this registry did not
   * issue is a 400.
   */
  collect(
    scope: Scope,
    query: Omit<ListingQuery, 'limit'>,
    wanted: number,
  ): Promise<{ items: ListedSkill[]; nextCursor?: string }> {
    return this.pages(query, wanted, (page) => this.page(scope, page));
  }

  /**
   * Every listed skill of a scope under a tag, by name. Its pages are not kept: a whole catalogue
   * would push everything else out of the read cache; what is made of it is kept instead.
   */
  async all(scope: Scope, query: { tag?: string; audience?: Audience } = {}): Promise<ListedSkill[]> {
    return (await this.pages(query, Number.POSITIVE_INFINITY, (page) => this.visiblePage(scope, page))).items;
  }

  private async pages(
    query: Omit<ListingQuery, 'limit'>,
    wanted: number,
    pageOf: (query: ListingQuery) => Promise<ListingPage>,
  ): Promise<{ items: ListedSkill[]; nextCursor?: string }> {
    const items: ListedSkill[] = [];
    let cursor = query.cursor || undefined;
    let read = 0;
    do {
      const limit = Math.min(LISTING_PAGE, wanted - read);
      const page = await pageOf({
        q: query.q?.trim() || undefined,
        tag: query.tag?.trim() || undefined,
        limit,
        cursor,
        ...(query.audience ? { audience: query.audience } : {}),
      });
      items.push(...page.items);
      read += limit;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && read < wanted);
    return cursor === undefined ? { items } : { items, nextCursor: cursor };
  }

  /** The listed item of one skill of a namespace under a tag (default latest), or undefined. */
  async item(namespace: string, name: string, tag: string = LATEST): Promise<ListedSkill | undefined> {
    const { items } = await this.catalogue.itemsOf(tag, [name], namespace);
    return items[0];
  }

  /** The cursor of the page after the one whose last item is `name` (faces with cursors of their own). */
  cursorAfter(name: string | undefined): string | undefined {
    return name === undefined ? undefined : encodeCatalogueCursor(name);
  }

  /**
   * What GET /prompt and GET /tools select from: the same listing kept in memory (one copy per
   * namespace, views merged over them the same way), caught up by revision.
   */
  agentCatalogue(scope: Scope): ScopedCatalogue {
    return this.catalogues.of(scope);
  }

  private async visiblePage(scope: Scope, query: ListingQuery): Promise<ListingPage> {
    const page = await this.unfiltered(scope, query);
    const visible = VISIBLE[query.audience ?? 'everyone'];
    return { items: page.items.filter((item) => visible(item.invocation)), nextCursor: page.nextCursor };
  }

  private unfiltered(scope: Scope, { q: words, tag, limit, cursor }: ListingQuery): Promise<ListingPage> {
    const q = words?.trim();
    if (q) return this.search.cataloguePage(scope, { q, tag, limit, cursor });
    if (scope.kind === 'view') return this.viewPage(scope, { tag, limit, cursor });
    return this.catalogue.catalogue({ tag, limit, cursor, namespace: scope.namespace });
  }

  /**
   * A page of a view, by name: each layer's next page after the cursor, and per name the highest
   * layer's item. A name among the page's first `limit` is among the first `limit` of every layer
   * that has it, so one page per layer suffices.
   */
  private async viewPage(scope: Scope, query: ListingQuery): Promise<ListingPage> {
    const layers = layersOf(scope);
    const pages = await Promise.all(
      layers.map((namespace) =>
        this.catalogue.catalogue({ tag: query.tag, limit: query.limit, cursor: query.cursor, namespace }),
      ),
    );
    const winners = new Map<string, ListedSkill>();
    pages.forEach((page, layer) => {
      for (const item of page.items) winners.set(item.name, { ...item, namespace: layers[layer]! });
    });
    const merged = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const items = merged.slice(0, query.limit);
    const more = merged.length > query.limit || pages.some((page) => page.nextCursor !== null);
    return { items, nextCursor: more && items.length > 0 ? encodeCatalogueCursor(items.at(-1)!.name) : null };
  }
}
