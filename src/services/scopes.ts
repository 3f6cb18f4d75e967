import { viewChangeKey } from '../cache/catalogue-state.js';
import type { ReadCache } from '../cache/read-cache.js';
import { NotFoundError, UnprocessableError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE, type Scope } from '../domain/scope.js';
import { jsonBody } from '../render/response-bodies.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type { StoredView, ViewsRepository } from '../storage/views-repository.js';
import { viewSchema, viewsResponseSchema } from '../wire/index.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { CachedReads } from './cached-read.js';
import { unknownNamespace } from './not-found.js';

export type ViewScope = Extract<Scope, { kind: 'view' }>;
export type NamespaceScope = Extract<Scope, { kind: 'namespace' }>;

/**
 * Which scope a prefixed request reads (/namespaces/{ns}/..., /views/{view}/...), and the views
 * themselves. A namespace exists once something was published into it; a view once it was put.
 * Both are known from memory while the change feed is live (the catalogue state hears of every new
 * namespace and every view edit), so resolving a scope costs no query.
 */
export class ScopeService {
  private readonly held = new Map<string, StoredView>();

  constructor(
    private readonly cache: ReadCache,
    private readonly skills: SkillsRepository,
    private readonly views: ViewsRepository,
  ) {
    this.reads = new CachedReads(cache);
  }

  private readonly reads: CachedReads;

  /** The scope of one namespace, or a 404 naming the namespaces that exist. */
  async namespace(namespace: string): Promise<NamespaceScope> {
    await this.cache.state.current();
    const scope: NamespaceScope = { kind: 'namespace', namespace };
    if (this.cache.state.namespaceRevision(namespace) !== undefined) return scope;
    // Not heard of (yet): the database decides, so a namespace made a moment ago on another replica counts.
    if (await this.skills.namespaceExists(namespace)) return scope;
    throw unknownNamespace(namespace, await this.skills.namespaceNames());
  }

  /** The scope of a view, with its layers as they are now, or a 404 naming the views that exist. */
  async view(name: string): Promise<ViewScope> {
    return scopeOf(await this.stored(name));
  }

  /** Creates or replaces a view (admin). Every layer must be a namespace that exists. */
  async putView(
    name: string,
    input: { layers: string[]; description?: string | null },
    actor: string,
  ): Promise<{ view: StoredView; created: boolean }> {
    const errors: { path: string; detail: string }[] = [];
    const seen = new Set<string>();
    input.layers.forEach((layer, at) => {
      if (seen.has(layer))
        errors.push({
          path: `layers[${at}]`,
          detail: `'${layer}' is listed twice; list each namespace once, lowest precedence first`,
        });
      seen.add(layer);
    });
    const existing = new Set(await this.skills.namespaceNames());
    input.layers.forEach((layer, at) => {
      if (!existing.has(layer) && !errors.some((error) => error.path === `layers[${at}]`)) {
        errors.push(missingLayer(layer, at));
      }
    });
    const refusal = (found: { path: string; detail: string }[]) =>
      new UnprocessableError(
        `view '${name}' cannot be saved: ${found.map((error) => error.detail).join('; ')}`,
        found,
      );
    if (errors.length > 0) throw refusal(errors);
    const saved = await this.views.put(
      { name, layers: input.layers, description: input.description ?? null },
      actor,
      viewChangeKey(name),
      // A namespace deleted since the check above: the same answer, and nothing saved.
      (missing) => refusal(missing.map((layer) => missingLayer(layer, input.layers.indexOf(layer)))),
    );
    this.held.set(name, saved.view);
    return saved;
  }

  async deleteView(name: string, actor: string): Promise<void> {
    const deleted = await this.views.delete(name, actor, viewChangeKey(name));
    this.held.delete(name);
    if (!deleted) throw await this.unknownView(name);
  }

  /** GET /views: every view, by name; true until the next write anywhere. */
  async listAnswer(): Promise<Answer> {
    const read = await this.reads.of({ read: 'views', on: { kind: 'catalogue' } });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () =>
        jsonBody(viewsResponseSchema, { items: (await this.views.list()).map(viewDocument) }),
    });
  }

  /** GET /views/{view}: the view's definition. */
  async viewAnswer(name: string): Promise<Answer> {
    const view = await this.stored(name);
    // True while the scope's revision stays, which goes up with every edit of the view.
    const read = await this.reads.of({ read: 'view', on: { kind: 'scope', scope: scopeOf(view) } });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      payload: async () => jsonBody(viewSchema, viewDocument(view)).value,
    });
  }

  /** The view as stored, from memory while it is known to be current. */
  private async stored(name: string): Promise<StoredView> {
    await this.cache.state.current();
    const known = this.cache.state.viewRevision(name);
    const held = this.held.get(name);
    if (held && this.cache.keeps && known !== undefined && held.revision >= known) return held;
    const view = await this.views.get(name);
    if (!view) {
      this.held.delete(name);
      throw await this.unknownView(name);
    }
    this.held.set(name, view);
    return view;
  }

  private async unknownView(name: string): Promise<NotFoundError> {
    const names = (await this.views.list()).map((view) => view.name);
    return new NotFoundError(
      `no view '${name}'. Views: ${names.join(', ') || 'none'} (GET /views); an admin creates one with PUT /views/${name} {"layers": ["${DEFAULT_NAMESPACE}", "..."]}`,
      { view: name, views: names },
    );
  }
}

function missingLayer(layer: string, at: number): { path: string; detail: string } {
  return {
    path: `layers[${at}]`,
    detail: `no namespace '${layer}': nothing was ever published into it. Publish into it first (POST /skills?namespace=${layer}), or leave it out`,
  };
}

function scopeOf(view: StoredView): ViewScope {
  return { kind: 'view', view: view.name, layers: view.layers };
}

function viewDocument(view: StoredView) {
  return {
    name: view.name,
    layers: view.layers,
    description: view.description,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}
