import { z } from 'zod';

/** The vendor-compatible Skills APIs: Anthropic's (`client.beta.skills`) and OpenAI's (`client.skills`). */

export const anthropicSkillSchema = z.object({
  id: z.string().describe('skill_<32 hex>: the same id on the OpenAI face'),
  type: z.literal('skill'),
  display_name: z.string().describe('display_name given at create, else the skill name'),
  latest_version_id: z.string().describe("The registry's `latest` version (its semver)"),
  source: z.object({ type: z.literal('custom') }),
  created_at: z.string(),
  updated_at: z.string(),
});

/** The shape SDKs before 0.122 read, with `anthropic-beta: skills-2025-10-02`. */
export const anthropicLegacySkillSchema = z.object({
  id: z.string(),
  type: z.literal('skill'),
  display_title: z.string(),
  latest_version: z.string(),
  source: z.literal('custom'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const anthropicAnySkillSchema = anthropicSkillSchema.or(anthropicLegacySkillSchema);

export const anthropicSkillListSchema = z.object({
  data: z.array(anthropicAnySkillSchema),
  next_page: z.string().nullable(),
});

export const anthropicVersionSchema = z.object({
  id: z.string().describe('The version (the registry semver): what versions.retrieve takes'),
  type: z.literal('skill_version'),
  skill_id: z.string(),
  version: z.string(),
  name: z.string(),
  description: z.string(),
  created_at: z.string(),
});

export const anthropicVersionListSchema = z.object({
  data: z.array(anthropicVersionSchema),
  next_page: z.string().nullable(),
});

export const anthropicSkillDeletedSchema = z.object({ id: z.string(), type: z.literal('skill_deleted') });

export const anthropicVersionDeletedSchema = z.object({
  id: z.string(),
  type: z.literal('skill_version_deleted'),
});

export const anthropicErrorSchema = z
  .object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) })
  .describe("Anthropic's error shape");

export const openAiSkillSchema = z.object({
  id: z.string().describe('skill_<32 hex>: the same id on the Anthropic face'),
  object: z.literal('skill'),
  name: z.string(),
  description: z.string(),
  default_version: z.string().describe("The registry's `latest` version, as its number in publish order"),
  latest_version: z.string().describe('The newest servable version, as its number'),
  created_at: z.number().int().describe('Unix seconds'),
});

export const openAiVersionSchema = z.object({
  id: z.string().describe('skillver_<32 hex>'),
  object: z.literal('skill.version'),
  skill_id: z.string(),
  version: z
    .string()
    .describe("The version's number in publish order (1 for the first); the registry semver works too"),
  name: z.string(),
  description: z.string(),
  created_at: z.number().int(),
});

/** OpenAI's list envelope around `item`. */
const openAiListOf = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal('list'),
    data: z.array(item),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  });

export const openAiSkillListSchema = openAiListOf(openAiSkillSchema);
export const openAiVersionListSchema = openAiListOf(openAiVersionSchema);

/** POST /openai/v1/skills/{skill_id} (client.skills.update). */
export const openAiUpdateSkillBodySchema = z.object({ default_version: z.string().min(1).max(256) });

export const openAiSkillDeletedSchema = z.object({
  id: z.string(),
  deleted: z.boolean(),
  object: z.literal('skill.deleted'),
});

export const openAiVersionDeletedSchema = z.object({
  id: z.string(),
  deleted: z.boolean(),
  object: z.literal('skill.version.deleted'),
  version: z.string(),
});

export const openAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable(),
      code: z.string().nullable(),
    }),
  })
  .describe("OpenAI's error shape");
