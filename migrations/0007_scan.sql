-- The publish-time scan of each version (src/scan): verdict, rules version and findings.
-- Versions stored before have none until a rescan.
ALTER TABLE "skill_versions" ADD COLUMN "scan" jsonb;
