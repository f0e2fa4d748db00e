CREATE TABLE `share_clicks` (
	`subscriber_id` text NOT NULL,
	`channel` text NOT NULL,
	`date` text NOT NULL,
	`waitlist_id` text NOT NULL,
	`clicks` integer DEFAULT 1 NOT NULL,
	PRIMARY KEY(`subscriber_id`, `channel`, `date`),
	FOREIGN KEY (`subscriber_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `share_clicks_waitlist_date_idx` ON `share_clicks` (`waitlist_id`,`date`);--> statement-breakpoint
CREATE TABLE `source_views` (
	`waitlist_id` text NOT NULL,
	`date` text NOT NULL,
	`source` text NOT NULL,
	`medium` text NOT NULL,
	`campaign` text NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`waitlist_id`, `date`, `source`, `medium`, `campaign`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `daily_stats` ADD `referral_views` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `utm_source` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `utm_medium` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `utm_campaign` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `utm_term` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `utm_content` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `referrer_host` text;