-- Namespaces and views (CONTRACT.md "Namespaces and views"). Every skill stored before moves into
-- `default`, which always exists; its revision starts at the catalogue's, so ETags stay ordered.
CREATE TABLE "namespaces" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO "namespaces" ("name", "created_at", "revision")
SELECT 'default', coalesce((SELECT min("created_at") FROM "skills"), now()),
	coalesce((SELECT "revision" FROM "registry_state" WHERE "id" = 1), 0);--> statement-breakpoint
CREATE TABLE "views" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"layers" text[] NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "namespace" text COLLATE "C" DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_namespace_namespaces_name_fk" FOREIGN KEY ("namespace") REFERENCES "public"."namespaces"("name") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "skills_namespace_name_unique" ON "skills" USING btree ("namespace","name");--> statement-breakpoint
ALTER TABLE "skills" DROP CONSTRAINT "skills_name_unique";--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "namespace" text;--> statement-breakpoint
UPDATE "audit_log" SET "namespace" = 'default' WHERE "skill" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "tokens" ADD COLUMN "namespaces" text[];--> statement-breakpoint
-- Statistics for the new (namespace, name) index at once: without them the catalogue's keyset pages
-- are planned as bitmap scans of every skill until autovacuum gets round to the table.
ANALYZE "skills";
