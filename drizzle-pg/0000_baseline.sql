CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"plan" text NOT NULL,
	"ai_credits" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "accounts_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"waitlist_id" text,
	"name" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint,
	CONSTRAINT "api_keys_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "captcha_solutions" (
	"signature" text PRIMARY KEY NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confirmation_sends" (
	"email" text NOT NULL,
	"waitlist_id" text NOT NULL,
	"sent_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "daily_stats" (
	"waitlist_id" text NOT NULL,
	"date" text NOT NULL,
	"sign_ups" integer DEFAULT 0 NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "daily_stats_waitlist_id_date_pk" PRIMARY KEY("waitlist_id","date")
);
--> statement-breakpoint
CREATE TABLE "job_leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "landing_pages" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"page_type" text NOT NULL,
	"status" text NOT NULL,
	"headline" text,
	"description" text,
	"button_text" text,
	"collect_name" boolean,
	"collect_phone" boolean,
	"background" text,
	"theme" text DEFAULT 'light' NOT NULL,
	"seo" text DEFAULT '{}' NOT NULL,
	"ai_html" text,
	"ai_meta" text,
	"ai_conversation" text,
	"last_generated_at" bigint,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"published_at" bigint,
	"published_snapshot" text,
	CONSTRAINT "landing_pages_waitlist_id_unique" UNIQUE("waitlist_id")
);
--> statement-breakpoint
CREATE TABLE "landing_previews" (
	"token" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"page" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "milestone_rewards" (
	"subscriber_id" text NOT NULL,
	"referrals" integer NOT NULL,
	"waitlist_id" text NOT NULL,
	"reward" text NOT NULL,
	"tag" text,
	"award_id" text NOT NULL,
	"reached_at" bigint NOT NULL,
	CONSTRAINT "milestone_rewards_subscriber_id_referrals_pk" PRIMARY KEY("subscriber_id","referrals"),
	CONSTRAINT "milestone_rewards_award_id_unique" UNIQUE("award_id")
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"topic" text NOT NULL,
	"waitlist_id" text NOT NULL,
	"subscriber_id" text,
	"related_id" text,
	"payload" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"locked_until" bigint,
	"last_error" text,
	"last_status" integer,
	"created_at" bigint NOT NULL,
	"sent_at" bigint
);
--> statement-breakpoint
CREATE TABLE "rank_counts" (
	"waitlist_id" text NOT NULL,
	"level" integer NOT NULL,
	"points" integer NOT NULL,
	"bucket" integer NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rank_counts_waitlist_id_level_points_bucket_pk" PRIMARY KEY("waitlist_id","level","points","bucket")
);
--> statement-breakpoint
CREATE TABLE "rate_limits" (
	"subject" text NOT NULL,
	"window_start" bigint NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_limits_subject_window_start_pk" PRIMARY KEY("subject","window_start")
);
--> statement-breakpoint
CREATE TABLE "referrals" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"referrer_id" text NOT NULL,
	"referee_id" text NOT NULL,
	"credited" boolean NOT NULL,
	"reason" text,
	"points" integer NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "referrals_referee_id_unique" UNIQUE("referee_id")
);
--> statement-breakpoint
CREATE TABLE "subscriber_tags" (
	"subscriber_id" text NOT NULL,
	"tag_id" text NOT NULL,
	CONSTRAINT "subscriber_tags_subscriber_id_tag_id_pk" PRIMARY KEY("subscriber_id","tag_id")
);
--> statement-breakpoint
CREATE TABLE "subscribers" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"phone" text,
	"status" text NOT NULL,
	"deliverability" text NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"seq" integer,
	"referral_code" text NOT NULL,
	"sign_up_token" text NOT NULL,
	"confirm_token" text,
	"referred_by" text,
	"referrer_id" text,
	"referral_count" integer DEFAULT 0 NOT NULL,
	"metadata" text DEFAULT '{}' NOT NULL,
	"referring_domain" text,
	"ip_address" text,
	"fingerprint" text,
	"fraud_checks" boolean DEFAULT false NOT NULL,
	"country" text,
	"city" text,
	"timezone" text,
	"joined_with" text NOT NULL,
	"joined_at" bigint NOT NULL,
	"confirmed_at" bigint,
	"access" text DEFAULT 'waiting' NOT NULL,
	"ranked_seq" integer GENERATED ALWAYS AS (CASE WHEN access = 'waiting' THEN seq END) STORED,
	"final_position" integer,
	"invite_token" text,
	"invited_at" bigint,
	"invite_expires_at" bigint,
	"accepted_at" bigint,
	"unsubscribed_at" bigint,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "subscribers_referral_code_unique" UNIQUE("referral_code"),
	CONSTRAINT "subscribers_sign_up_token_unique" UNIQUE("sign_up_token")
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"name" text NOT NULL,
	"color" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "view_dedupe" (
	"waitlist_id" text NOT NULL,
	"visitor" text NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "view_dedupe_waitlist_id_visitor_pk" PRIMARY KEY("waitlist_id","visitor")
);
--> statement-breakpoint
CREATE TABLE "waitlists" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"key" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"category" text,
	"description" text,
	"referral_enabled" boolean DEFAULT false NOT NULL,
	"signup_points" integer DEFAULT 50 NOT NULL,
	"referral_points" integer DEFAULT 30 NOT NULL,
	"validate_emails" boolean DEFAULT true NOT NULL,
	"double_opt_in" boolean DEFAULT false NOT NULL,
	"position_offset" integer DEFAULT 0 NOT NULL,
	"allowed_domains" text DEFAULT '[]' NOT NULL,
	"welcome_enabled" boolean DEFAULT false NOT NULL,
	"welcome_subject" text NOT NULL,
	"welcome_body" text NOT NULL,
	"confirmation_subject" text NOT NULL,
	"confirmation_body" text NOT NULL,
	"webhook_url" text,
	"webhook_enabled" boolean DEFAULT false NOT NULL,
	"signing_secret" text NOT NULL,
	"custom_domain" text,
	"leaderboard" boolean DEFAULT false NOT NULL,
	"milestones" text DEFAULT '[]' NOT NULL,
	"invitation_subject" text DEFAULT 'Your invitation to {{waitlist_name}}' NOT NULL,
	"invitation_body" text DEFAULT 'Hi {{name}},

Your wait is over: you are invited to {{waitlist_name}}.

Accept your invitation: {{invite_link}}' NOT NULL,
	"invite_expiry_days" integer DEFAULT 14 NOT NULL,
	"invite_redirect_url" text,
	"captcha" text DEFAULT 'off' NOT NULL,
	"signup_url" text,
	"milestone_subject" text DEFAULT 'You unlocked a reward on the {{waitlist_name}} waitlist' NOT NULL,
	"milestone_body" text DEFAULT 'Hi {{name}},

You have referred {{referral_count}} friends to {{waitlist_name}}. Your reward: {{reward}}

Keep sharing your link: {{referral_link}}' NOT NULL,
	"subscribers_count" integer DEFAULT 0 NOT NULL,
	"last_seq" integer DEFAULT 0 NOT NULL,
	"views_count" integer DEFAULT 0 NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "waitlists_key_unique" UNIQUE("key"),
	CONSTRAINT "waitlists_slug_unique" UNIQUE("slug"),
	CONSTRAINT "waitlists_custom_domain_unique" UNIQUE("custom_domain")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daily_stats" ADD CONSTRAINT "daily_stats_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "landing_pages" ADD CONSTRAINT "landing_pages_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "landing_previews" ADD CONSTRAINT "landing_previews_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "milestone_rewards" ADD CONSTRAINT "milestone_rewards_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "milestone_rewards" ADD CONSTRAINT "milestone_rewards_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rank_counts" ADD CONSTRAINT "rank_counts_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "referrals" ADD CONSTRAINT "referrals_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "referrals" ADD CONSTRAINT "referrals_referrer_id_subscribers_id_fk" FOREIGN KEY ("referrer_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "referrals" ADD CONSTRAINT "referrals_referee_id_subscribers_id_fk" FOREIGN KEY ("referee_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriber_tags" ADD CONSTRAINT "subscriber_tags_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriber_tags" ADD CONSTRAINT "subscriber_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "view_dedupe" ADD CONSTRAINT "view_dedupe_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "waitlists" ADD CONSTRAINT "waitlists_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "api_keys_waitlist_idx" ON "api_keys" USING btree ("waitlist_id");--> statement-breakpoint
CREATE INDEX "captcha_solutions_expires_idx" ON "captcha_solutions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "confirmation_sends_email_idx" ON "confirmation_sends" USING btree ("email","sent_at");--> statement-breakpoint
CREATE INDEX "confirmation_sends_sent_idx" ON "confirmation_sends" USING btree ("sent_at");--> statement-breakpoint
CREATE INDEX "landing_previews_expires_idx" ON "landing_previews" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "outbox_due_idx" ON "outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "outbox_waitlist_idx" ON "outbox" USING btree ("waitlist_id","created_at");--> statement-breakpoint
CREATE INDEX "rate_limits_window_idx" ON "rate_limits" USING btree ("window_start");--> statement-breakpoint
CREATE INDEX "referrals_referrer_idx" ON "referrals" USING btree ("referrer_id","created_at");--> statement-breakpoint
CREATE INDEX "subscriber_tags_tag_idx" ON "subscriber_tags" USING btree ("tag_id");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_waitlist_email_idx" ON "subscribers" USING btree ("waitlist_id","email");--> statement-breakpoint
CREATE INDEX "subscribers_ranked_idx" ON "subscribers" USING btree ("waitlist_id","points" DESC,"ranked_seq");--> statement-breakpoint
CREATE INDEX "subscribers_joined_idx" ON "subscribers" USING btree ("waitlist_id","joined_at");--> statement-breakpoint
CREATE INDEX "subscribers_referrals_idx" ON "subscribers" USING btree ("waitlist_id","referral_count");--> statement-breakpoint
CREATE INDEX "subscribers_ip_idx" ON "subscribers" USING btree ("waitlist_id","ip_address","joined_at");--> statement-breakpoint
CREATE INDEX "subscribers_fingerprint_idx" ON "subscribers" USING btree ("waitlist_id","fingerprint") WHERE "subscribers"."fingerprint" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "subscribers_referrer_idx" ON "subscribers" USING btree ("referrer_id") WHERE "subscribers"."referrer_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_confirm_token_idx" ON "subscribers" USING btree ("confirm_token") WHERE "subscribers"."confirm_token" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "subscribers_unranked_idx" ON "subscribers" USING btree ("waitlist_id","joined_at") WHERE "subscribers"."ranked_seq" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_invite_token_idx" ON "subscribers" USING btree ("invite_token") WHERE "subscribers"."invite_token" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "tags_waitlist_name_idx" ON "tags" USING btree ("waitlist_id",lower("name"));--> statement-breakpoint
CREATE INDEX "view_dedupe_expires_idx" ON "view_dedupe" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "waitlists_name_nocase_idx" ON "waitlists" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "waitlists_account_created_idx" ON "waitlists" USING btree ("account_id","created_at");