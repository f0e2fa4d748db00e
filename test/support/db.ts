// A temporary database with one account ('a') and one waitlist ('w'), for tests of services without HTTP.
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../src/db/open";
import { onCleanup, removeDir, tempDir } from "./cleanup";
import { scratchPgUrl } from "./pg";
import { engine } from "./server";

/** On the suites' engine (TEST_ENGINE): an embedded file, or a fresh PostgreSQL database. */
export async function scratchDatabase(): Promise<{ db: Db; close: () => Promise<void> }> {
  const dir = tempDir("waitlist-db-");
  const db = await openDatabase({ url: engine === "pg" ? await scratchPgUrl() : `file:${join(dir, "scratch.db")}`, poolSize: 4 });
  // a test that never calls close() still gets its connection closed at the end of the run (the folder too)
  const unregister = onCleanup(() => db.close());
  await db.exec(sql`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('a', 'a', 'business', 0, 0)`);
  await db.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
    VALUES ('w', 'a', 'k', 's', 'n', '', '', '', '', '', 0, 0)`);
  return {
    db,
    close: async () => {
      unregister();
      await db.close();
      removeDir(dir);
    },
  };
}

/**
 * The rank counters as the rows make them (drizzle/0005: level 63 one bucket per points value, levels 16 and 8
 * blocks of 65536 and 256 confirmation numbers), for the subscribers `where` picks (portable SQL, both engines).
 */
export const recountRanks = (where = "TRUE") =>
  `SELECT l.level, s.points, CASE WHEN l.level = 63 THEN 0 WHEN l.level = 16 THEN s.ranked_seq / 65536 ELSE s.ranked_seq / 256 END AS bucket, count(*) AS count
   FROM subscribers s CROSS JOIN (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) l
   WHERE s.ranked_seq IS NOT NULL AND ${where} GROUP BY l.level, s.points, bucket ORDER BY l.level, s.points, bucket`;
