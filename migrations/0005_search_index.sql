-- The in-memory search index (src/search) reads each version's counted terms from search_terms; the
-- full-text vector and the description trigram index it replaces are dropped, so a publish writes less.
ALTER TABLE "skill_versions" ADD COLUMN "search_terms" text;--> statement-breakpoint
DROP INDEX "skill_versions_search_idx";--> statement-breakpoint
DROP INDEX "skill_versions_description_trgm_idx";--> statement-breakpoint
ALTER TABLE "skill_versions" DROP COLUMN "search";--> statement-breakpoint
-- What agents loaded after searching (src/services/search-feedback.ts).
CREATE TABLE "search_feedback" (
	"term" text NOT NULL,
	"skill" text NOT NULL,
	"loads" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "search_feedback_term_skill_pk" PRIMARY KEY("term","skill")
);
--> statement-breakpoint
CREATE INDEX "search_feedback_updated_at_idx" ON "search_feedback" USING btree ("updated_at");