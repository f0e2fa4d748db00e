CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`plan` text NOT NULL,
	`ai_credits` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_username_unique` ON `accounts` (`username`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`waitlist_id` text,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE INDEX `api_keys_waitlist_idx` ON `api_keys` (`waitlist_id`);--> statement-breakpoint
CREATE TABLE `job_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rate_limits` (
	`subject` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`subject`, `window_start`)
);
--> statement-breakpoint
CREATE INDEX `rate_limits_window_idx` ON `rate_limits` (`window_start`);--> statement-breakpoint
CREATE TABLE `waitlists` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`category` text,
	`description` text,
	`referral_enabled` integer DEFAULT false NOT NULL,
	`signup_points` integer DEFAULT 50 NOT NULL,
	`referral_points` integer DEFAULT 30 NOT NULL,
	`validate_emails` integer DEFAULT true NOT NULL,
	`double_opt_in` integer DEFAULT false NOT NULL,
	`position_offset` integer DEFAULT 0 NOT NULL,
	`allowed_domains` text DEFAULT '[]' NOT NULL,
	`welcome_enabled` integer DEFAULT false NOT NULL,
	`welcome_subject` text NOT NULL,
	`welcome_body` text NOT NULL,
	`confirmation_subject` text NOT NULL,
	`confirmation_body` text NOT NULL,
	`webhook_url` text,
	`webhook_enabled` integer DEFAULT false NOT NULL,
	`signing_secret` text NOT NULL,
	`custom_domain` text,
	`subscribers_count` integer DEFAULT 0 NOT NULL,
	`views_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `waitlists_key_unique` ON `waitlists` (`key`);--> statement-breakpoint
CREATE UNIQUE INDEX `waitlists_slug_unique` ON `waitlists` (`slug`);--> statement-breakpoint
CREATE UNIQUE INDEX `waitlists_custom_domain_unique` ON `waitlists` (`custom_domain`);--> statement-breakpoint
CREATE UNIQUE INDEX `waitlists_name_nocase_idx` ON `waitlists` (lower("name"));--> statement-breakpoint
CREATE INDEX `waitlists_account_created_idx` ON `waitlists` (`account_id`,`created_at`);