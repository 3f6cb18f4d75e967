import { z } from 'zod';

/** Shared request and response schemas; they are also what /openapi.json shows. */

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

export const tokenCountsSchema = z.object({
  description: z.number().int().describe('Tokens one catalogue entry of this skill costs (o200k_base)'),
  body: z.number().int().describe('Tokens of the SKILL.md body (o200k_base)'),
});

export const catalogueItemSchema = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  tags: z.array(z.string()).describe('Dist-tags pointing at this version'),
  digest: z.string(),
  updatedAt: z.string().describe('When this version became the one the tag points at'),
  tokens: tokenCountsSchema,
});

export const fileEntrySchema = z.object({
  path: z.string(),
  size: z.number().int(),
  digest: z.string().describe('sha256:<hex> of the file bytes'),
});

export const versionSummarySchema = z.object({
  version: z.string(),
  digest: z.string(),
  createdAt: z.string(),
  yanked: z.boolean(),
  tags: z.array(z.string()),
});

export const skillDetailSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  digest: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  yanked: z.boolean(),
  tokens: tokenCountsSchema,
  size: z.number().int().describe('Total bytes of all files'),
  files: z.array(fileEntrySchema),
  distTags: z.record(z.string(), z.string()),
  versions: z.array(versionSummarySchema),
});

export const issueSchema = z.object({ path: z.string(), detail: z.string() });

export const publishResultSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest: z.string(),
  created: z.boolean().describe('false when identical content was already published'),
  warnings: z.array(issueSchema),
});
