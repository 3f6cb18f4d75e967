CREATE TABLE "version_archives" (
	"version_id" uuid NOT NULL,
	"format" text NOT NULL,
	"blob_digest" text NOT NULL,
	CONSTRAINT "version_archives_version_id_format_pk" PRIMARY KEY("version_id","format")
);
--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "last_loaded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "load_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "version_archives" ADD CONSTRAINT "version_archives_version_id_skill_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."skill_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "version_archives" ADD CONSTRAINT "version_archives_blob_digest_blobs_digest_fk" FOREIGN KEY ("blob_digest") REFERENCES "public"."blobs"("digest") ON DELETE no action ON UPDATE no action;