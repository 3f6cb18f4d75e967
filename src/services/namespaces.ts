import { namespaceDeletedKey } from '../cache/catalogue-state.js';
import type { ReadCache } from '../cache/read-cache.js';
import { BadRequestError, ConflictError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE, type Scope } from '../domain/scope.js';
import { jsonBody } from '../render/response-bodies.js';
import type { NamespacesRepository } from '../storage/namespaces-repository.js';
import { namespaceDigestsSchema, namespacesResponseSchema } from '../wire/index.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { CachedReads } from './cached-read.js';
import { unknownNamespace } from './not-found.js';

/** What namespaces exist and hold (GET /namespaces). */
export class NamespaceService {
  constructor(
    private readonly namespaces: NamespacesRepository,
    cache: ReadCache,
  ) {
    this.reads = new CachedReads(cache);
  }

  private readonly reads: CachedReads;

  /** Every namespace with its count of current skills: true until the next write anywhere. */
  async listAnswer(): Promise<Answer> {
    const read = await this.reads.of({ read: 'namespaces', on: { kind: 'catalogue' } });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () =>
        jsonBody(namespacesResponseSchema, {
          items: (await this.namespaces.list()).map((item) => ({
            ...item,
            createdAt: item.createdAt.toISOString(),
          })),
        }),
    });
  }

  /**
   * The digests of every live version of every skill of a namespace (GET /namespaces/{ns}/digests):
   * what a sync compares its folders with before publishing only what changed. True until the next
   * write into the namespace.
   */
  async digestsAnswer(scope: Extract<Scope, { kind: 'namespace' }>): Promise<Answer> {
    const read = await this.reads.of({ read: 'digests', on: { kind: 'scope', scope } });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () =>
        jsonBody(namespaceDigestsSchema, {
          namespace: scope.namespace,
          skills: await this.namespaces.digests(scope.namespace),
        }),
    });
  }

  /**
   * Deletes a namespace and everything in it (admin). `default` stays; a namespace a view uses is
   * refused with a 409 naming the views, so no view ever loses a layer without its admin editing it.
   */
  async delete(namespace: string, actor: string): Promise<{ skills: number; versions: number }> {
    if (namespace === DEFAULT_NAMESPACE) {
      throw new BadRequestError(
        `namespace '${DEFAULT_NAMESPACE}' always exists (it is the unprefixed API); yank its versions instead`,
        { namespace },
      );
    }
    const outcome = await this.namespaces.delete(namespace, actor, namespaceDeletedKey(namespace));
    if (outcome.deleted) return { skills: outcome.skills, versions: outcome.versions };
    if (outcome.reason === 'used') {
      throw new ConflictError(
        `namespace '${namespace}' is a layer of the views ${outcome.views.map((view) => `'${view}'`).join(', ')}; take it out of them (PUT /views/{view}) or delete them first`,
        { namespace, views: outcome.views },
      );
    }
    throw unknownNamespace(
      namespace,
      (await this.namespaces.list()).map((item) => item.name),
    );
  }
}
