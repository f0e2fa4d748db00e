CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`outbox_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event` text NOT NULL,
	`status` text NOT NULL,
	`status_code` integer,
	`latency_ms` integer,
	`response` text,
	`error` text,
	`attempted_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`attempted_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_at_idx` ON `webhook_deliveries` (`attempted_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`events` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`format` text DEFAULT 'json' NOT NULL,
	`legacy_signature` integer DEFAULT false NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_until` integer,
	`failing_since` integer,
	`disabled_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_waitlist_idx` ON `webhook_endpoints` (`waitlist_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `outbox` ADD `event_id` text;--> statement-breakpoint
ALTER TABLE `outbox` ADD `endpoint_id` text;--> statement-breakpoint
CREATE INDEX `outbox_event_idx` ON `outbox` (`event_id`);--> statement-breakpoint
CREATE INDEX `outbox_endpoint_idx` ON `outbox` (`endpoint_id`,`subscriber_id`) WHERE "outbox"."kind" = 'webhook';--> statement-breakpoint
ALTER TABLE `waitlists` ADD `webhook_endpoints` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- issue 49: the `webhook` setting becomes the waitlist's first endpoint, with the X-Webhook-* headers it sent
INSERT INTO `webhook_endpoints` (`id`, `waitlist_id`, `url`, `events`, `enabled`, `format`, `legacy_signature`, `secret`, `created_at`, `updated_at`)
  SELECT 'we_' || lower(hex(randomblob(12))), `id`, `webhook_url`, '[]', `webhook_enabled`, 'json', 1, `signing_secret`, `updated_at`, `updated_at` FROM `waitlists` WHERE `webhook_url` IS NOT NULL;--> statement-breakpoint
UPDATE `waitlists` SET `webhook_endpoints` = 1 WHERE `webhook_url` IS NOT NULL;--> statement-breakpoint
UPDATE `outbox` SET `event_id` = `id`;--> statement-breakpoint
UPDATE `outbox` SET `endpoint_id` = (SELECT e.`id` FROM `webhook_endpoints` e WHERE e.`waitlist_id` = `outbox`.`waitlist_id`) WHERE `kind` = 'webhook';
