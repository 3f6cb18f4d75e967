/**
 * The registry's wire: every document it answers with and every request body it takes, written once as
 * zod schemas. The routes' schemas (hence /openapi.json), the services that encode cached answers, the
 * MCP tools' output, the typed client (src/client/types.ts, by z.infer) and the console's types all come
 * from here; the README's field lists are checked against it (test/docs/readme-fields.test.ts).
 *
 * Pure: imports zod and nothing of the server but the pure namespace and audit-action rules, so the
 * console can compile these types for the browser (test/architecture.test.ts).
 */
export * from './admin.js';
export * from './agents.js';
export * from './clawhub.js';
export * from './namespaces.js';
export * from './service.js';
export * from './skills.js';
export * from './text.js';
export * from './trusted-publishing.js';
export type * from './types.js';
export * from './vendors.js';
