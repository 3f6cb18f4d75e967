import { z } from 'zod';

/** The service's own documents: errors (RFC 9457), probes, the start page, the CLI index, OpenAPI. */

/** RFC 9457 problem document. Extension members (errors, suggestions, limits...) are allowed. */
export const problemSchema = z
  .looseObject({
    type: z
      .string()
      .describe('URI reference identifying the problem type; about:blank for plain HTTP errors'),
    title: z.string().describe('Short summary of the problem type'),
    status: z.number().int(),
    detail: z.string().describe('What went wrong and how to fix it'),
    instance: z.string().optional().describe('The request path'),
    errors: z
      .array(z.object({ path: z.string(), detail: z.string() }))
      .optional()
      .describe('Every specific problem, each naming where it is and how to fix it'),
  })
  .describe('RFC 9457 problem details (application/problem+json)');

/** GET /livez. */
export const livenessSchema = z.object({ status: z.literal('ok') });

/** GET /readyz. */
export const readinessSchema = z.object({
  status: z.literal('ok'),
  database: z.enum(['postgres', 'pglite']),
});

const link = (description: string) => z.string().describe(description);

/** GET / with Accept: application/json. */
export const homeSchema = z
  .object({
    name: z.literal('skill-registry'),
    version: z.string(),
    readAuth: z.boolean().describe('Reads need a token with scope read (SKILLREG_READ_AUTH)'),
    links: z.object({
      console: link('The web console'),
      docs: link('The API, browsable'),
      openapi: link('The OpenAPI 3.1 document'),
      catalogue: link('GET: layer 1, the catalogue'),
      prompt: link('GET: the system-prompt fragment for remote agents'),
      tools: link('GET: load-tool definitions for a model API'),
      search: link('GET ?q=: search skills by describing a task'),
      mcp: link('POST: MCP (Streamable HTTP)'),
      index: link('GET: the Agent Skills discovery index (npx skills add <registry URL>)'),
      cli: link('GET: the skillreg CLI this registry serves, version-matched'),
      health: link('GET: readiness'),
    }),
  })
  .describe('Where a person or a program goes from here');

/** GET / : the HTML page, or the links as JSON. */
export const homeResponseSchema = z.union([z.string().describe('text/html'), homeSchema]);

const cliFileSchema = z.object({
  url: z.string().describe('Absolute URL of the file on this registry'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('Hex sha256 of the bytes served at `url` (as `sha256sum` prints it)'),
  size: z.number().int().describe('Bytes'),
});

/** GET /cli. */
export const cliIndexSchema = z
  .object({
    version: z.string().describe("The CLI's version: the server's own, the CLI is built from its code"),
    package: z.string().describe('The npm package name the tarball installs under (`npm ls -g`)'),
    node: z.string().describe('Node.js versions it runs on'),
    files: z.object({
      'skillreg.mjs': cliFileSchema.describe('One ES module: `node skillreg.mjs <command>`'),
      'skillreg.tgz': cliFileSchema.describe('An npm package of it: bin `skillreg`, no dependencies'),
    }),
    install: z
      .object({ npm: z.string(), npx: z.string(), node: z.string() })
      .describe('Ways to run it, none of which downloads anything but these files'),
  })
  .describe('Where to get the skillreg CLI this registry serves, and the checksums to pin');

/** GET /openapi.json: the OpenAPI 3.1 document (described by its own specification, not here). */
export const openApiDocumentSchema = z.record(z.string(), z.unknown());
