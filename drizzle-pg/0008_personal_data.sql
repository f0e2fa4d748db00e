CREATE TABLE "data_requests" (
	"token" text PRIMARY KEY NOT NULL,
	"subscriber_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "data_requests" ADD CONSTRAINT "data_requests_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "data_requests_subscriber_idx" ON "data_requests" USING btree ("subscriber_id","created_at");--> statement-breakpoint
CREATE INDEX "data_requests_expires_idx" ON "data_requests" USING btree ("expires_at");