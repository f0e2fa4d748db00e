CREATE TABLE "share_clicks" (
	"subscriber_id" text NOT NULL,
	"channel" text NOT NULL,
	"date" text NOT NULL,
	"waitlist_id" text NOT NULL,
	"clicks" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "share_clicks_subscriber_id_channel_date_pk" PRIMARY KEY("subscriber_id","channel","date")
);
--> statement-breakpoint
CREATE TABLE "source_views" (
	"waitlist_id" text NOT NULL,
	"date" text NOT NULL,
	"source" text NOT NULL,
	"medium" text NOT NULL,
	"campaign" text NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "source_views_waitlist_id_date_source_medium_campaign_pk" PRIMARY KEY("waitlist_id","date","source","medium","campaign")
);
--> statement-breakpoint
ALTER TABLE "daily_stats" ADD COLUMN "referral_views" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "utm_source" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "utm_medium" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "utm_campaign" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "utm_term" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "utm_content" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "referrer_host" text;--> statement-breakpoint
ALTER TABLE "share_clicks" ADD CONSTRAINT "share_clicks_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "share_clicks" ADD CONSTRAINT "share_clicks_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_views" ADD CONSTRAINT "source_views_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "share_clicks_waitlist_date_idx" ON "share_clicks" USING btree ("waitlist_id","date");