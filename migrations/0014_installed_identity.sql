ALTER TABLE "skill_versions" ADD COLUMN "computed_hash" text;--> statement-breakpoint
ALTER TABLE "skill_versions" ADD COLUMN "git_tree" text;--> statement-breakpoint
ALTER TABLE "skill_versions" ADD COLUMN "git_commit" text;