CREATE TABLE `data_requests` (
	`token` text PRIMARY KEY NOT NULL,
	`subscriber_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`subscriber_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `data_requests_subscriber_idx` ON `data_requests` (`subscriber_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `data_requests_expires_idx` ON `data_requests` (`expires_at`);--> statement-breakpoint
ALTER TABLE `waitlists` ADD `retention_days` integer;