-- no-transaction: auto_vacuum only takes effect on an existing database after a VACUUM, and VACUUM
-- cannot run inside a transaction; the runner applies these statements one by one (src/db/client.ts).
PRAGMA auto_vacuum = INCREMENTAL;
--> statement-breakpoint
VACUUM;
