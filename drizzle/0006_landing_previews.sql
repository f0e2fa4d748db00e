CREATE TABLE `landing_previews` (
	`token` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`page` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `landing_previews_expires_idx` ON `landing_previews` (`expires_at`);