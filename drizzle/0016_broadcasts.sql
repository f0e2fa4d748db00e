CREATE TABLE `broadcast_recipients` (
	`broadcast_id` text NOT NULL,
	`subscriber_id` text NOT NULL,
	`outbox_id` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`broadcast_id`, `subscriber_id`),
	FOREIGN KEY (`broadcast_id`) REFERENCES `broadcasts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `broadcast_recipients_status_idx` ON `broadcast_recipients` (`broadcast_id`,`status`);--> statement-breakpoint
CREATE TABLE `broadcasts` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`subject` text NOT NULL,
	`body_markdown` text NOT NULL,
	`segment` text DEFAULT '{}' NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`send_at` integer,
	`cursor` text,
	`queued_at` integer,
	`started_at` integer,
	`finished_at` integer,
	`cancelled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `broadcasts_waitlist_idx` ON `broadcasts` (`waitlist_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `broadcasts_due_idx` ON `broadcasts` (`status`,`send_at`);--> statement-breakpoint
ALTER TABLE `subscribers` ADD `email_status` text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `email_sender_name` text;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `email_logo_url` text;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `email_color` text DEFAULT '#111827' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `email_footer` text;--> statement-breakpoint
CREATE INDEX `outbox_subscriber_email_idx` ON `outbox` (`subscriber_id`,`created_at`) WHERE "outbox"."kind" = 'email';