// The one lock order of writes to a waitlist's line on PostgreSQL (issue 18): the waitlist's row first, then
// subscriber rows; the triggers then take the rank counters and the waitlist's count. SQLite's single writer
// needs none of it: there the statement is a cheap read in the same write.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import { locksLine } from "../db/store";

/** Locks the waitlist's row until the write or transaction it starts ends. */
export const lockLine = (db: Pick<Db, "d">, waitlistId: string): SQL =>
  locksLine(sql`SELECT 1 FROM waitlists WHERE id = ${waitlistId}${db.d.forUpdate}`, waitlistId);
