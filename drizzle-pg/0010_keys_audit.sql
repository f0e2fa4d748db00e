CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"at" bigint NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text NOT NULL,
	"actor_name" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"ip" text,
	"user_agent" text
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scopes" text DEFAULT 'read,write' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "waitlist_ids" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "prefix" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_account_idx" ON "audit_log" USING btree ("account_id","at");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("account_id","actor_id","at");