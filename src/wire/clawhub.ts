import { z } from 'zod';

/**
 * The ClawHub-compatible read API ({scope}/api/v1/...), in the shapes the `clawhub` CLI (0.23.3) reads:
 * skills are slugs, times are milliseconds since the epoch, the owner is the skill's namespace.
 */

const millis = z.number().int().describe('Milliseconds since the epoch');

export const clawhubVersionSchema = z.object({
  version: z.string(),
  createdAt: millis,
  changelog: z.string().describe('Always empty: the registry keeps no changelog'),
});

export const clawhubSkillSchema = z.object({
  slug: z.string().describe('The skill name'),
  displayName: z.string(),
  summary: z.string().nullable().describe('The description'),
  tags: z.record(z.string(), z.string()).describe('Dist-tags, tag to version'),
  stats: z.record(z.string(), z.number()),
  createdAt: millis,
  updatedAt: millis,
});

export const clawhubOwnerSchema = z.object({
  handle: z.string().describe('The namespace'),
  displayName: z.string(),
});

export const clawhubSearchResponseSchema = z.object({
  results: z.array(
    z.object({
      slug: z.string(),
      displayName: z.string(),
      summary: z.string().nullable(),
      version: z.string(),
      score: z.number(),
      ownerHandle: z.string(),
    }),
  ),
});

export const clawhubListResponseSchema = z.object({
  items: z.array(clawhubSkillSchema.extend({ latestVersion: clawhubVersionSchema })),
  nextCursor: z.string().nullable(),
});

export const clawhubSkillResponseSchema = z.object({
  skill: clawhubSkillSchema,
  latestVersion: clawhubVersionSchema.nullable(),
  owner: clawhubOwnerSchema,
  moderation: z.null(),
});

export const clawhubVersionsResponseSchema = z.object({
  items: z.array(clawhubVersionSchema),
  nextCursor: z.string().nullable(),
});

export const clawhubVersionResponseSchema = z.object({
  version: clawhubVersionSchema.extend({
    files: z.array(z.object({ path: z.string(), size: z.number().int(), sha256: z.string() })),
  }),
  skill: z.object({ slug: z.string(), displayName: z.string() }),
});

export const clawhubResolveResponseSchema = z.object({
  match: z
    .object({ version: z.string() })
    .nullable()
    .describe('The version whose files the fingerprint is of'),
  latestVersion: z.object({ version: z.string() }).nullable(),
});
