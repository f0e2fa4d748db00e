CREATE TABLE `captcha_solutions` (
	`signature` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `captcha_solutions_expires_idx` ON `captcha_solutions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `confirmation_sends` (
	`email` text NOT NULL,
	`waitlist_id` text NOT NULL,
	`sent_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `confirmation_sends_email_idx` ON `confirmation_sends` (`email`,`sent_at`);--> statement-breakpoint
CREATE INDEX `confirmation_sends_sent_idx` ON `confirmation_sends` (`sent_at`);--> statement-breakpoint
ALTER TABLE `landing_pages` ADD `published_snapshot` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `unsubscribed_at` integer;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `captcha` text DEFAULT 'off' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `signup_url` text;