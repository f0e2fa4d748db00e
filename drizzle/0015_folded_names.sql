-- Issue 44: waitlist and tag names are "the same" when foldName (src/db/fold-names.ts) spells them alike, on both
-- engines, and search compares folded subscriber names. The keys are computed in code: start-up fills those of rows
-- written before (foldExistingNames), renaming a name the new rule finds taken.
DROP INDEX `tags_waitlist_name_idx`;--> statement-breakpoint
ALTER TABLE `tags` ADD `name_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `tags_waitlist_name_key_idx` ON `tags` (`waitlist_id`,`name_key`);--> statement-breakpoint
DROP INDEX `waitlists_name_nocase_idx`;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `name_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `waitlists_name_key_idx` ON `waitlists` (`name_key`);--> statement-breakpoint
ALTER TABLE `subscribers` ADD `name_key` text;--> statement-breakpoint
CREATE INDEX `subscribers_name_unfolded_idx` ON `subscribers` (`id`) WHERE "subscribers"."name_key" IS NULL AND "subscribers"."name" IS NOT NULL;