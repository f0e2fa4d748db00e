CREATE TABLE "import_rows" (
	"import_id" text NOT NULL,
	"line" integer NOT NULL,
	"waitlist_id" text NOT NULL,
	"joined_at" bigint NOT NULL,
	"email" text,
	"data" text NOT NULL,
	"ext_id" text,
	"ext_code" text,
	"subscriber_id" text,
	"referrer_pending" text,
	"staged_at" bigint NOT NULL,
	CONSTRAINT "import_rows_import_id_line_pk" PRIMARY KEY("import_id","line")
);
--> statement-breakpoint
CREATE TABLE "imports" (
	"id" text PRIMARY KEY NOT NULL,
	"waitlist_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"mode" text NOT NULL,
	"dry_run" boolean DEFAULT false NOT NULL,
	"notify" boolean DEFAULT false NOT NULL,
	"mapping" text NOT NULL,
	"row_count" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"invalid" integer DEFAULT 0 NOT NULL,
	"errors" text DEFAULT '[]' NOT NULL,
	"cursor_at" bigint,
	"cursor_line" integer,
	"linked" boolean DEFAULT false NOT NULL,
	"failure" text,
	"holder" text,
	"locked_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
ALTER TABLE "import_rows" ADD CONSTRAINT "import_rows_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "imports" ADD CONSTRAINT "imports_waitlist_id_waitlists_id_fk" FOREIGN KEY ("waitlist_id") REFERENCES "public"."waitlists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "import_rows_order_idx" ON "import_rows" USING btree ("import_id","joined_at","line");--> statement-breakpoint
CREATE INDEX "import_rows_email_idx" ON "import_rows" USING btree ("import_id","email");--> statement-breakpoint
CREATE INDEX "import_rows_ext_idx" ON "import_rows" USING btree ("import_id","ext_id");--> statement-breakpoint
CREATE INDEX "import_rows_code_idx" ON "import_rows" USING btree ("import_id","ext_code");--> statement-breakpoint
CREATE INDEX "imports_waitlist_idx" ON "imports" USING btree ("waitlist_id","created_at");--> statement-breakpoint
CREATE INDEX "imports_status_idx" ON "imports" USING btree ("status");