ALTER TABLE "subscribers" ADD COLUMN "answers" text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "waitlists" ADD COLUMN "form_fields" text DEFAULT '[]' NOT NULL;