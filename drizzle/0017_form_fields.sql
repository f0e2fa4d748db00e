ALTER TABLE `subscribers` ADD `answers` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `form_fields` text DEFAULT '[]' NOT NULL;