CREATE TABLE "trusted_publishers" (
	"namespace" text NOT NULL,
	"id" text NOT NULL,
	"issuer" text NOT NULL,
	"claims" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trusted_publishers_namespace_id_pk" PRIMARY KEY("namespace","id")
);
--> statement-breakpoint
ALTER TABLE "skill_versions" ADD COLUMN "publisher" jsonb;--> statement-breakpoint
ALTER TABLE "tokens" ADD COLUMN "publisher" jsonb;--> statement-breakpoint
CREATE INDEX "trusted_publishers_issuer_idx" ON "trusted_publishers" USING btree ("issuer");