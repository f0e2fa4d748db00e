-- Issue 44: waitlist and tag names are "the same" when foldName (src/db/fold-names.ts) spells them alike, on both
-- engines, and search compares folded subscriber names. The keys are computed in code: start-up fills those of rows
-- written before (foldExistingNames), renaming a name the new rule finds taken.
DROP INDEX "tags_waitlist_name_idx";--> statement-breakpoint
DROP INDEX "waitlists_name_nocase_idx";--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "name_key" text;--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "name_key" text;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "name_key" text;--> statement-breakpoint
CREATE INDEX "subscribers_name_unfolded_idx" ON "subscribers" USING btree ("id") WHERE "subscribers"."name_key" IS NULL AND "subscribers"."name" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "tags_waitlist_name_key_idx" ON "tags" USING btree ("waitlist_id","name_key");--> statement-breakpoint
CREATE UNIQUE INDEX "waitlists_name_key_idx" ON "waitlists" USING btree ("name_key");