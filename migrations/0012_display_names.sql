-- The vendor APIs' display name of a skill (Anthropic display_name); null shows the name.
ALTER TABLE "skills" ADD COLUMN "display_name" text;