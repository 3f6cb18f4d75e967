-- The in-memory search index (src/search) reads each version's counted terms from search_terms; the
-- full-text vector and the description trigram index it replaces are dropped, so a publish writes less.
ALTER TABLE "skill_versions" ADD COLUMN "search_terms" text;--> statement-breakpoint
DROP INDEX "skill_versions_search_idx";--> statement-breakpoint
DROP INDEX "skill_versions_description_trgm_idx";--> statement-breakpoint
ALTER TABLE "skill_versions" DROP COLUMN "search";
