-- Quarantine: versions the scan blocked are stored for review but never served (no tag, no reads).
ALTER TABLE "skill_versions" ADD COLUMN "quarantine" text;--> statement-breakpoint
CREATE INDEX "skill_versions_quarantine_idx" ON "skill_versions" USING btree ("quarantine","created_at") WHERE "skill_versions"."quarantine" is not null;
