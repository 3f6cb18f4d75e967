import { layersOf, type Scope } from '../domain/scope.js';
import type { AgentCatalogueQuery, AgentSkill, PromptSkill } from '../render/prompt.js';
import type { CatalogueRepository } from '../storage/catalogue-repository.js';
import { LATEST } from '../storage/records.js';
import { AgentCatalogueMirror, type AgentCatalogueOptions } from './agent-catalogue.js';
import type { CatalogueState } from './catalogue-state.js';

/** What agent renderings (GET /prompt, GET /tools) select from: one scope's current catalogue. */
export interface ScopedCatalogue {
  agentCatalogue(query: AgentCatalogueQuery): Promise<AgentSkill[]>;
  /** Descriptions of listed skills, by name (PromptOptions.describe). */
  describe(skills: readonly Pick<PromptSkill, 'name' | 'version'>[]): Promise<Map<string, string>>;
  /** In a view, the layer each listed name resolves to (PromptOptions.namespaceOf). */
  namespaceOf?: (name: string) => string | undefined;
}

/** The search's ranking in a scope: names best first. */
export type ScopedRanking = (scope: Scope, query: { q: string; tag?: string }) => Promise<string[]>;

/** Another in-memory copy's string for a skill's name in a namespace, to hold one string, not two. */
export type SharedName = (namespace: string, name: string) => string | undefined;

/** A view's merged catalogue, valid while each layer's entries are the ones it was merged from. */
interface MergedView {
  from: readonly (readonly AgentSkill[])[];
  entries: AgentSkill[];
  /** The layer each entry comes from, by position (a byte an entry rather than a map of names). */
  layerOf: Uint8Array;
  layers: readonly string[];
}

/** The layer a name of a merged view resolves to (its entries are sorted by name). */
function namespaceIn(view: MergedView, name: string): string | undefined {
  let low = 0;
  let high = view.entries.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = view.entries[middle]!.name;
    if (at === name) return view.layers[view.layerOf[middle]!];
    if (at < name) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

/** Views whose merged catalogues are kept at once. */
const MAX_MERGED_VIEWS = 64;

/**
 * Every namespace's agent catalogue in memory (an AgentCatalogueMirror each, made when first read),
 * and views over them: a view's catalogue is its layers' merged by name, the highest layer's entry
 * winning, remade only when a layer's copy changed.
 */
export class AgentCatalogues {
  private readonly mirrors = new Map<string, AgentCatalogueMirror>();
  private readonly merged = new Map<string, MergedView>();

  constructor(
    private readonly repository: CatalogueRepository,
    private readonly state: CatalogueState,
    private readonly ranking: ScopedRanking,
    private readonly options: AgentCatalogueOptions = {},
    private readonly sharedName?: SharedName,
  ) {}

  /** The copy of one namespace's catalogue. */
  mirror(namespace: string): AgentCatalogueMirror {
    let mirror = this.mirrors.get(namespace);
    if (!mirror) {
      mirror = new AgentCatalogueMirror(
        this.repository,
        this.state,
        (query) => this.ranking({ kind: 'namespace', namespace }, query),
        {
          ...this.options,
          ...(this.sharedName && { sharedName: (name: string) => this.sharedName!(namespace, name) }),
        },
        namespace,
      );
      this.mirrors.set(namespace, mirror);
    }
    return mirror;
  }

  /** What a scope's renderings select from. */
  of(scope: Scope): ScopedCatalogue {
    if (scope.kind === 'namespace') return this.mirror(scope.namespace);
    return new ViewCatalogue(this, scope, this.ranking);
  }

  /** A view's current catalogue under `latest`, by name, with the layer of each entry. */
  async mergedView(scope: Extract<Scope, { kind: 'view' }>): Promise<MergedView> {
    const layers = layersOf(scope);
    const snapshots = await Promise.all(layers.map((namespace) => this.mirror(namespace).snapshot()));
    const key = `${scope.view}|${layers.join(',')}`;
    const held = this.merged.get(key);
    // A catch-up that found nothing new keeps the entries array: the merge is reused.
    if (
      held &&
      held.from.length === snapshots.length &&
      held.from.every((one, at) => one === snapshots[at]!.entries)
    ) {
      return held;
    }
    const view = mergeLayers(
      snapshots.map((snapshot) => snapshot.entries),
      layers,
    );
    this.merged.delete(key);
    this.merged.set(key, view);
    if (this.merged.size > MAX_MERGED_VIEWS) this.merged.delete(this.merged.keys().next().value!);
    return view;
  }

  /** Forgets a deleted namespace's copy (a namespace made again under its name starts afresh). */
  drop(namespace: string): void {
    this.mirrors.get(namespace)?.close();
    this.mirrors.delete(namespace);
    this.merged.clear();
  }

  close(): void {
    for (const mirror of this.mirrors.values()) mirror.close();
    this.mirrors.clear();
    this.merged.clear();
  }
}

/** One view's catalogue as renderings read it (see AgentCatalogues). */
class ViewCatalogue implements ScopedCatalogue {
  /** Where each listed name resolves: from the merged view, or (another tag) a map of the few read. */
  private resolve: (name: string) => string | undefined = () => undefined;

  constructor(
    private readonly catalogues: AgentCatalogues,
    private readonly scope: Extract<Scope, { kind: 'view' }>,
    private readonly ranking: ScopedRanking,
  ) {}

  readonly namespaceOf = (name: string): string | undefined => this.resolve(name);

  async agentCatalogue(query: AgentCatalogueQuery): Promise<AgentSkill[]> {
    const q = query.q?.trim();
    if (q) {
      const ranked = await this.ranking(this.scope, { q, tag: query.tag });
      const wanted = query.names ? new Set(query.names) : undefined;
      const names = wanted ? ranked.filter((name) => wanted.has(name)) : ranked;
      const entries = await this.entries({ ...query, q: undefined, names });
      const rank = new Map(names.map((name, at) => [name, at]));
      return entries.sort((a, b) => rank.get(a.name)! - rank.get(b.name)!);
    }
    return this.entries(query);
  }

  async describe(skills: readonly Pick<PromptSkill, 'name' | 'version'>[]): Promise<Map<string, string>> {
    const byNamespace = new Map<string, Pick<PromptSkill, 'name' | 'version'>[]>();
    for (const skill of skills) {
      const namespace = this.resolve(skill.name);
      if (namespace === undefined) continue;
      const list = byNamespace.get(namespace);
      if (list) list.push(skill);
      else byNamespace.set(namespace, [skill]);
    }
    const found = new Map<string, string>();
    for (const [namespace, listed] of byNamespace) {
      for (const [name, description] of await this.catalogues.mirror(namespace).describe(listed)) {
        found.set(name, description);
      }
    }
    return found;
  }

  private async entries(query: AgentCatalogueQuery): Promise<AgentSkill[]> {
    if (query.names !== undefined && query.names.length === 0) return [];
    if ((query.tag ?? LATEST) !== LATEST) return this.otherTag(query);
    const view = await this.catalogues.mergedView(this.scope);
    this.resolve = (name) => namespaceIn(view, name);
    if (query.names === undefined) return view.entries;
    const wanted = new Set(query.names);
    return view.entries.filter((entry) => wanted.has(entry.name));
  }

  /** Another tag: each layer's entries from the database, merged the same way. */
  private async otherTag(query: AgentCatalogueQuery): Promise<AgentSkill[]> {
    const layers = layersOf(this.scope);
    const perLayer = await Promise.all(
      layers.map((namespace) => this.catalogues.mirror(namespace).agentCatalogue({ ...query, q: undefined })),
    );
    const winners = new Map<string, AgentSkill>();
    const namespaces = new Map<string, string>();
    perLayer.forEach((entries, at) => {
      for (const entry of entries) {
        winners.set(entry.name, entry);
        namespaces.set(entry.name, layers[at]!);
      }
    });
    this.resolve = (name) => namespaces.get(name);
    return [...winners.values()].sort((a, b) => byCodePoint(a.name, b.name));
  }
}

/**
 * The layers' entries (each sorted by name) merged by name in one pass, the highest layer's entry
 * winning a name several hold.
 */
function mergeLayers(perLayer: readonly (readonly AgentSkill[])[], layers: readonly string[]): MergedView {
  const entries: AgentSkill[] = [];
  const layerOf = new Uint8Array(perLayer.reduce((sum, one) => sum + one.length, 0));
  const at = perLayer.map(() => 0);
  for (;;) {
    let least: string | undefined;
    for (let layer = 0; layer < perLayer.length; layer++) {
      const entry = perLayer[layer]![at[layer]!];
      if (entry && (least === undefined || entry.name < least)) least = entry.name;
    }
    if (least === undefined) break;
    let winner = -1;
    for (let layer = 0; layer < perLayer.length; layer++) {
      if (perLayer[layer]![at[layer]!]?.name === least) {
        winner = layer;
        at[layer]! += 1;
      }
    }
    layerOf[entries.length] = winner;
    entries.push(perLayer[winner]![at[winner]! - 1]!);
  }
  return { from: perLayer, entries, layerOf, layers };
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
