ALTER TABLE "registry_state" ADD COLUMN "loads_revision" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "dist_tags_version_tag_idx" ON "dist_tags" USING btree ("version_id","tag");