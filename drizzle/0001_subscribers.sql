CREATE TABLE `daily_stats` (
	`waitlist_id` text NOT NULL,
	`date` text NOT NULL,
	`sign_ups` integer DEFAULT 0 NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`waitlist_id`, `date`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rank_counts` (
	`waitlist_id` text NOT NULL,
	`level` integer NOT NULL,
	`points` integer NOT NULL,
	`bucket` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`waitlist_id`, `level`, `points`, `bucket`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `referrals` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`referrer_id` text NOT NULL,
	`referee_id` text NOT NULL,
	`credited` integer NOT NULL,
	`reason` text,
	`points` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`referrer_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`referee_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `referrals_referee_id_unique` ON `referrals` (`referee_id`);--> statement-breakpoint
CREATE INDEX `referrals_referrer_idx` ON `referrals` (`referrer_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `subscriber_tags` (
	`subscriber_id` text NOT NULL,
	`tag_id` text NOT NULL,
	PRIMARY KEY(`subscriber_id`, `tag_id`),
	FOREIGN KEY (`subscriber_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `subscriber_tags_tag_idx` ON `subscriber_tags` (`tag_id`);--> statement-breakpoint
CREATE TABLE `subscribers` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`email` text NOT NULL,
	`name` text,
	`phone` text,
	`status` text NOT NULL,
	`deliverability` text NOT NULL,
	`points` integer DEFAULT 0 NOT NULL,
	`seq` integer,
	`referral_code` text NOT NULL,
	`sign_up_token` text NOT NULL,
	`confirm_token` text,
	`referred_by` text,
	`referrer_id` text,
	`referral_count` integer DEFAULT 0 NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`referring_domain` text,
	`ip_address` text,
	`fingerprint` text,
	`country` text,
	`city` text,
	`timezone` text,
	`joined_with` text NOT NULL,
	`joined_at` integer NOT NULL,
	`confirmed_at` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_referral_code_unique` ON `subscribers` (`referral_code`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_sign_up_token_unique` ON `subscribers` (`sign_up_token`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_confirm_token_unique` ON `subscribers` (`confirm_token`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_waitlist_email_idx` ON `subscribers` (`waitlist_id`,`email`);--> statement-breakpoint
CREATE INDEX `subscribers_rank_idx` ON `subscribers` (`waitlist_id`,"points" DESC,`seq`);--> statement-breakpoint
CREATE INDEX `subscribers_joined_idx` ON `subscribers` (`waitlist_id`,`joined_at`);--> statement-breakpoint
CREATE INDEX `subscribers_referrals_idx` ON `subscribers` (`waitlist_id`,`referral_count`);--> statement-breakpoint
CREATE INDEX `subscribers_ip_idx` ON `subscribers` (`waitlist_id`,`ip_address`,`joined_at`);--> statement-breakpoint
CREATE INDEX `subscribers_fingerprint_idx` ON `subscribers` (`waitlist_id`,`fingerprint`);--> statement-breakpoint
CREATE INDEX `subscribers_referrer_idx` ON `subscribers` (`referrer_id`);--> statement-breakpoint
CREATE INDEX `subscribers_pending_idx` ON `subscribers` (`waitlist_id`,`joined_at`) WHERE "subscribers"."seq" IS NULL;--> statement-breakpoint
CREATE TABLE `tags` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`name` text NOT NULL,
	`color` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_waitlist_name_idx` ON `tags` (`waitlist_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `view_dedupe` (
	`waitlist_id` text NOT NULL,
	`visitor` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`waitlist_id`, `visitor`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `view_dedupe_expires_idx` ON `view_dedupe` (`expires_at`);--> statement-breakpoint
ALTER TABLE `waitlists` ADD `last_seq` integer DEFAULT 0 NOT NULL;