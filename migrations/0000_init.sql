-- pg_trgm backs the fuzzy name search and the "did you mean" suggestions (PGlite ships it too).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"skill" text,
	"version" text,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "blobs" (
	"digest" text PRIMARY KEY NOT NULL,
	"size" bigint NOT NULL,
	"content" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dist_tags" (
	"skill_id" uuid NOT NULL,
	"tag" text NOT NULL,
	"version_id" uuid NOT NULL,
	"pinned" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dist_tags_skill_id_tag_pk" PRIMARY KEY("skill_id","tag")
);
--> statement-breakpoint
CREATE TABLE "registry_state" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skill_versions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"skill_id" uuid NOT NULL,
	"version" text NOT NULL,
	"digest" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"frontmatter" jsonb NOT NULL,
	"body" text NOT NULL,
	"skill_md_size" integer NOT NULL,
	"total_size" bigint NOT NULL,
	"file_count" integer NOT NULL,
	"tokens_description" integer NOT NULL,
	"tokens_body" integer NOT NULL,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"published_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"yanked_at" timestamp with time zone,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple', name), 'A') || setweight(to_tsvector('english', description), 'B')) STORED
);
--> statement-breakpoint
CREATE TABLE "skills" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "skills_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"secret_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "tokens_secret_hash_unique" UNIQUE("secret_hash")
);
--> statement-breakpoint
CREATE TABLE "version_files" (
	"version_id" uuid NOT NULL,
	"path" text NOT NULL,
	"blob_digest" text NOT NULL,
	"size" bigint NOT NULL,
	"mode" integer DEFAULT 420 NOT NULL,
	CONSTRAINT "version_files_version_id_path_pk" PRIMARY KEY("version_id","path")
);
--> statement-breakpoint
ALTER TABLE "dist_tags" ADD CONSTRAINT "dist_tags_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dist_tags" ADD CONSTRAINT "dist_tags_version_id_skill_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."skill_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_versions" ADD CONSTRAINT "skill_versions_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "version_files" ADD CONSTRAINT "version_files_version_id_skill_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."skill_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "version_files" ADD CONSTRAINT "version_files_blob_digest_blobs_digest_fk" FOREIGN KEY ("blob_digest") REFERENCES "public"."blobs"("digest") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "dist_tags_tag_idx" ON "dist_tags" USING btree ("tag");--> statement-breakpoint
CREATE UNIQUE INDEX "skill_versions_skill_version_unique" ON "skill_versions" USING btree ("skill_id","version");--> statement-breakpoint
CREATE INDEX "skill_versions_skill_digest_idx" ON "skill_versions" USING btree ("skill_id","digest");--> statement-breakpoint
CREATE INDEX "skill_versions_search_idx" ON "skill_versions" USING gin ("search");--> statement-breakpoint
CREATE INDEX "skill_versions_name_trgm_idx" ON "skill_versions" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "skill_versions_description_trgm_idx" ON "skill_versions" USING gin ("description" gin_trgm_ops);--> statement-breakpoint
INSERT INTO "registry_state" ("id", "revision") VALUES (1, 0) ON CONFLICT DO NOTHING;
