-- /prompt's XML now escapes only what XML requires (descriptions keep >, " and ' as written), so
-- the stored o200k counts of descriptions holding those characters no longer match their entries.
-- Cleared here, they are counted again by the start-up backfill (services/prompt-tokens.ts), and
-- renderings count such entries themselves until then.
UPDATE "skill_versions"
SET "tokens_prompt_xml" = NULL, "tokens_prompt_markdown" = NULL, "tokens_prompt_name" = NULL
WHERE "tokens_prompt_name" IS NOT NULL AND "description" ~ '[>"'']';
