import { jsonBody } from '../cache/bodies.js';
import { revisionEtag } from '../cache/etags.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { Scope } from '../namespaces.js';
import type { NamespacesRepository } from '../storage/namespaces-repository.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { namespaceDigestsSchema, namespacesResponseSchema } from './documents.js';

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
}
