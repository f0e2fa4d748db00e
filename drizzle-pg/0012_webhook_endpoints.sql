CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"outbox_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event" text NOT NULL,
	"status" text NOT NULL,
	"status_code" integer,
	"latency_ms" integer,
	"response" text,
	"error" text,
	"attempted_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"events" text DEFAULT '[]' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"format" text DEFAULT 'json' NOT NULL,
	"legacy_signature" boolean DEFAULT false NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" bigint,
	"failing_since" bigint,
	"disabled_reason" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "event_id" text;--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "endpoint_id" text;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "webhook_endpoints" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_at_idx" ON "webhook_deliveries" USING btree ("attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_waitlist_idx" ON "webhook_endpoints" USING btree ("waitlist_id","created_at");--> statement-breakpoint
CREATE INDEX "outbox_event_idx" ON "outbox" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "outbox_endpoint_idx" ON "outbox" USING btree ("endpoint_id","subscriber_id") WHERE "outbox"."kind" = 'webhook';--> statement-breakpoint
-- issue 49: the `webhook` setting becomes the waitlist's first endpoint, with the X-Webhook-* headers it sent
INSERT INTO "webhook_endpoints" ("id", "waitlist_id", "url", "events", "enabled", "format", "legacy_signature", "secret", "created_at", "updated_at")
  SELECT 'we_' || substr(md5(random()::text || "id"), 1, 24), "id", "webhook_url", '[]', "webhook_enabled", 'json', true, "signing_secret", "updated_at", "updated_at" FROM "waitlists" WHERE "webhook_url" IS NOT NULL;--> statement-breakpoint
UPDATE "waitlists" SET "webhook_endpoints" = 1 WHERE "webhook_url" IS NOT NULL;--> statement-breakpoint
UPDATE "outbox" SET "event_id" = "id";--> statement-breakpoint
UPDATE "outbox" SET "endpoint_id" = (SELECT e."id" FROM "webhook_endpoints" e WHERE e."waitlist_id" = "outbox"."waitlist_id") WHERE "kind" = 'webhook';
