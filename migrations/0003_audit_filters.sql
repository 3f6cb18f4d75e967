CREATE INDEX "audit_log_skill_id_idx" ON "audit_log" USING btree ("skill","id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_id_idx" ON "audit_log" USING btree ("actor","id");