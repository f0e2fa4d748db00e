CREATE TABLE "broadcast_recipients" (
	"broadcast_id" text NOT NULL,
	"subscriber_id" text NOT NULL,
	"outbox_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "broadcast_recipients_broadcast_id_subscriber_id_pk" PRIMARY KEY("broadcast_id","subscriber_id")
);
--> statement-breakpoint
CREATE TABLE "broadcasts" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"subject" text NOT NULL,
	"body_markdown" text NOT NULL,
	"segment" text DEFAULT '{}' NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"send_at" bigint,
	"cursor" text,
	"queued_at" bigint,
	"started_at" bigint,
	"finished_at" bigint,
	"cancelled_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "email_status" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "email_sender_name" text;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "email_logo_url" text;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "email_color" text DEFAULT '#111827' NOT NULL;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "email_footer" text;--> statement-breakpoint
ALTER TABLE "broadcast_recipients" ADD CONSTRAINT "broadcast_recipients_broadcast_id_broadcasts_id_fk" FOREIGN KEY ("broadcast_id") REFERENCES "public"."broadcasts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "broadcasts" ADD CONSTRAINT "broadcasts_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "broadcast_recipients_status_idx" ON "broadcast_recipients" USING btree ("broadcast_id","status");--> statement-breakpoint
CREATE INDEX "broadcasts_waitlist_idx" ON "broadcasts" USING btree ("waitlist_id","created_at");--> statement-breakpoint
CREATE INDEX "broadcasts_due_idx" ON "broadcasts" USING btree ("status","send_at");--> statement-breakpoint
CREATE INDEX "outbox_subscriber_email_idx" ON "outbox" USING btree ("subscriber_id","created_at") WHERE "outbox"."kind" = 'email';