CREATE TABLE "startup_checks" (
	"name" text PRIMARY KEY NOT NULL,
	"revision" bigint NOT NULL,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "skill_versions_without_identity_idx" ON "skill_versions" USING btree ("id") WHERE "skill_versions"."git_commit" is null;--> statement-breakpoint
CREATE INDEX "skill_versions_without_prompt_tokens_idx" ON "skill_versions" USING btree ("id") WHERE "skill_versions"."tokens_prompt_name" is null;