import type { SwaggerTransformObject } from '@fastify/swagger';

type Responses = Record<string, { content?: Record<string, unknown> }>;
type Operation = { responses?: Responses; parameters?: { name?: string; in?: string }[] };

/**
 * Final touches on the generated OpenAPI document:
 * - error responses are served as `application/problem+json` (RFC 9457), so document them so;
 * - Fastify's wildcard `*` parameter (files/{*}) is published under the name the contract uses, `path`.
 */
export const finishOpenApi: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const openapi = document.openapiObject;
  const paths = (openapi.paths ?? {}) as Record<string, Record<string, Operation>>;
  const finished: Record<string, Record<string, Operation>> = {};
  for (const [path, item] of Object.entries(paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== 'object' || operation === null) continue;
      for (const [code, response] of Object.entries(operation.responses ?? {})) {
        const json = response.content?.['application/json'];
        if (/^[45]/.test(code) && json && response.content) {
          response.content = { 'application/problem+json': json };
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'path' && parameter.name === '*') parameter.name = 'path';
      }
    }
    finished[path.replace('{*}', '{path}')] = item;
  }
  return { ...openapi, paths: finished } as ReturnType<SwaggerTransformObject>;
};
