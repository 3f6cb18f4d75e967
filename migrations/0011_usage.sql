-- Usage per skill, version and UTC day (loads, file reads, bundle downloads), kept SKILLREG_USAGE_DAYS days.
CREATE TABLE "skill_usage" (
	"skill_id" uuid NOT NULL,
	"version" text NOT NULL,
	"day" date NOT NULL,
	"loads" bigint DEFAULT 0 NOT NULL,
	"files" bigint DEFAULT 0 NOT NULL,
	"downloads" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "skill_usage_skill_id_day_version_pk" PRIMARY KEY("skill_id","day","version")
);
--> statement-breakpoint
ALTER TABLE "skill_usage" ADD CONSTRAINT "skill_usage_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_usage_day_idx" ON "skill_usage" USING btree ("day");