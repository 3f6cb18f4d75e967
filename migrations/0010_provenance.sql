-- Provenance: the registry's Ed25519 signing keys (shared by replicas; old ones kept for rotation) and one DSSE envelope per version.
CREATE TABLE "attestations" (
	"version_id" uuid PRIMARY KEY NOT NULL,
	"kid" text NOT NULL,
	"envelope" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"private_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attestations" ADD CONSTRAINT "attestations_version_id_skill_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."skill_versions"("id") ON DELETE cascade ON UPDATE no action;