import { jsonBody } from '../cache/bodies.js';
import { namespaceDeletedKey } from '../cache/catalogue-state.js';
import { revisionEtag } from '../cache/etags.js';
import type { ReadCache } from '../cache/read-cache.js';
import { BadRequestError, ConflictError } from '../errors.js';
import { DEFAULT_NAMESPACE, type Scope } from '../namespaces.js';
import type { NamespacesRepository } from '../storage/namespaces-repository.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { namespaceDigestsSchema, namespacesResponseSchema } from './documents.js';
import { unknownNamespace } from './not-found.js';

/** What namespaces exist and hold (GET /namespaces). */
export class NamespaceService {
  constructor(
    private readonly namespaces: NamespacesRepository,
    private readonly cache: ReadCache,
  ) {}

  /** Every namespace with its count of current skills: true until the next write anywhere. */
  async listAnswer(): Promise<Answer> {
    const revision = await this.cache.revision();
    return {
      etag: revisionEtag(revision, 'namespaces'),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'catalogue', revision },
      body: async () => {
        const body = await this.cache.catalogueWide(
          'namespaces',
          revision,
          async () =>
            jsonBody(namespacesResponseSchema, {
              items: (await this.namespaces.list()).map((item) => ({
                ...item,
                createdAt: item.createdAt.toISOString(),
              })),
            }),
          true,
        );
        return { payload: body };
      },
    };
  }

  /**
   * The digests of every live version of every skill of a namespace (GET /namespaces/{ns}/digests):
   * what a sync compares its folders with before publishing only what changed. True until the next
   * write into the namespace.
   */
  async digestsAnswer(scope: Extract<Scope, { kind: 'namespace' }>): Promise<Answer> {
    const revision = await this.cache.scopeRevision(scope);
    return {
      etag: revisionEtag(revision, 'digests', scope.namespace),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'scope', scope, revision },
      body: async () => {
        const body = await this.cache.catalogueWide(
          `digests|${scope.namespace}`,
          revision,
          async () =>
            jsonBody(namespaceDigestsSchema, {
              namespace: scope.namespace,
              skills: await this.namespaces.digests(scope.namespace),
            }),
          true,
        );
        return { payload: body };
      },
    };
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
