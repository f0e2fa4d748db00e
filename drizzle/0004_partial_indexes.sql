DROP INDEX `subscribers_confirm_token_unique`;--> statement-breakpoint
DROP INDEX `subscribers_fingerprint_idx`;--> statement-breakpoint
DROP INDEX `subscribers_referrer_idx`;--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_confirm_token_idx` ON `subscribers` (`confirm_token`) WHERE "subscribers"."confirm_token" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `subscribers_fingerprint_idx` ON `subscribers` (`waitlist_id`,`fingerprint`) WHERE "subscribers"."fingerprint" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `subscribers_referrer_idx` ON `subscribers` (`referrer_id`) WHERE "subscribers"."referrer_id" IS NOT NULL;