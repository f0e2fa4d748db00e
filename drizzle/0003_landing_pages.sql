CREATE TABLE `landing_pages` (
	`id` text PRIMARY KEY NOT NULL,
	`waitlist_id` text NOT NULL,
	`page_type` text NOT NULL,
	`status` text NOT NULL,
	`headline` text,
	`description` text,
	`button_text` text,
	`collect_name` integer,
	`collect_phone` integer,
	`background` text,
	`theme` text DEFAULT 'light' NOT NULL,
	`seo` text DEFAULT '{}' NOT NULL,
	`ai_html` text,
	`ai_meta` text,
	`ai_conversation` text,
	`last_generated_at` integer,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`published_at` integer,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `landing_pages_waitlist_id_unique` ON `landing_pages` (`waitlist_id`);