import { z } from 'zod';

/**
 * Shared request schemas (parameters and queries); they are also what /openapi.json shows. The
 * documents the routes answer with are in src/services/documents.ts, shared with every other face.
 */

export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** PostgreSQL text cannot hold NUL: such a value is refused as a 400 instead of failing the query (a 500). */
export const withoutNul = (schema: z.ZodString) =>
  schema.refine((value) => !value.includes('\u0000'), 'must not contain a NUL character');

export const nameParam = z.object({
  name: withoutNul(z.string().min(1).max(64)).describe('Skill name (lowercase letters, digits, hyphens)'),
});

export const selectorQuery = z.object({
  version: withoutNul(z.string().max(256)).optional().describe('Exact version; responses are then immutable'),
  tag: withoutNul(z.string().max(64))
    .optional()
    .describe('Dist-tag such as latest, stable, beta (default latest)'),
});
