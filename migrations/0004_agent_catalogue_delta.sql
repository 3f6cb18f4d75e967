ALTER TABLE "skill_versions" ADD COLUMN "tokens_prompt_xml" integer;--> statement-breakpoint
ALTER TABLE "skill_versions" ADD COLUMN "tokens_prompt_markdown" integer;--> statement-breakpoint
ALTER TABLE "skill_versions" ADD COLUMN "tokens_prompt_name" integer;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "changed_revision" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "loaded_revision" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "skills_changed_revision_idx" ON "skills" USING btree ("changed_revision");--> statement-breakpoint
CREATE INDEX "skills_loaded_revision_idx" ON "skills" USING btree ("loaded_revision");--> statement-breakpoint
-- Skill names sort by code point on every server, whatever its locale: catalogue pages, prompts and the in-memory agent catalogue then agree (names are a-z, 0-9 and hyphens, which en_US would order differently).
ALTER TABLE "skills" ALTER COLUMN "name" SET DATA TYPE text COLLATE "C";
