CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`topic` text NOT NULL,
	`waitlist_id` text NOT NULL,
	`subscriber_id` text,
	`related_id` text,
	`payload` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`locked_until` integer,
	`last_error` text,
	`last_status` integer,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `outbox_due_idx` ON `outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `outbox_waitlist_idx` ON `outbox` (`waitlist_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `subscribers` ADD `fraud_checks` integer DEFAULT false NOT NULL;