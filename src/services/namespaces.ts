import { jsonBody } from '../cache/bodies.js';
import { revisionEtag } from '../cache/etags.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { NamespacesRepository } from '../storage/namespaces-repository.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { namespacesResponseSchema } from './documents.js';

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
}
