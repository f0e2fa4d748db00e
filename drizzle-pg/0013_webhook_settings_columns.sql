ALTER TABLE "waitlists" DROP COLUMN "webhook_url";--> statement-breakpoint
ALTER TABLE "waitlists" DROP COLUMN "webhook_enabled";