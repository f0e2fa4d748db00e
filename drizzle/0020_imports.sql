CREATE TABLE `import_rows` (
	`import_id` text NOT NULL,
	`line` integer NOT NULL,
	`waitlist_id` text NOT NULL,
	`joined_at` integer NOT NULL,
	`email` text,
	`data` text NOT NULL,
	`ext_id` text,
	`ext_code` text,
	`subscriber_id` text,
	`referrer_pending` text,
	`staged_at` integer NOT NULL,
	PRIMARY KEY(`import_id`, `line`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `import_rows_order_idx` ON `import_rows` (`import_id`,`joined_at`,`line`);--> statement-breakpoint
CREATE INDEX `import_rows_email_idx` ON `import_rows` (`import_id`,`email`);--> statement-breakpoint
CREATE INDEX `import_rows_ext_idx` ON `import_rows` (`import_id`,`ext_id`);--> statement-breakpoint
CREATE INDEX `import_rows_code_idx` ON `import_rows` (`import_id`,`ext_code`);--> statement-breakpoint
CREATE TABLE `imports` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`mode` text NOT NULL,
	`dry_run` integer DEFAULT false NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	`mapping` text NOT NULL,
	`row_count` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`invalid` integer DEFAULT 0 NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`cursor_at` integer,
	`cursor_line` integer,
	`linked` integer DEFAULT false NOT NULL,
	`failure` text,
	`holder` text,
	`locked_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `imports_waitlist_idx` ON `imports` (`waitlist_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `imports_status_idx` ON `imports` (`status`);