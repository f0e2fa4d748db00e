CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`at` integer NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text NOT NULL,
	`actor_name` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`ip` text,
	`user_agent` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_log_account_idx` ON `audit_log` (`account_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_log_actor_idx` ON `audit_log` (`account_id`,`actor_id`,`at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scopes` text DEFAULT 'read,write' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `waitlist_ids` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `prefix` text;