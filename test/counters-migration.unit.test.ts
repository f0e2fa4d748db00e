// Migration 0013 (the counter tables WITHOUT ROWID) on a file that already holds a ranked line, daily counts, view
// dedupe rows and rate-limit windows: every row is carried over, the triggers that keep the rank counters and daily
// counts still do, upserts still find their rows, and every position is what it was (embedded engine only).
import { afterAll, expect, test } from "bun:test";
import { createClient, type Client } from "@libsql/client";
import { sql } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Db } from "../src/db/open";
import { migrations } from "../src/db/migrations.gen";
import { positionOf } from "../src/subscribers/rank";
import { engine } from "./support/server";

const BEFORE = migrations.findIndex((m) => m.tag === "0013_counters_without_rowid");
const dir = mkdtempSync(join(tmpdir(), "counters-migration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The schema as the binary before 0013 left it: its migrations applied and recorded as the runner records them. */
async function schemaBefore(client: Client) {
  await client.execute("CREATE TABLE schema_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  for (const m of migrations.slice(0, BEFORE)) {
    const statements = m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean);
    if (m.sql.startsWith("-- no-transaction")) for (const s of statements) await client.execute(s);
    else await client.batch(statements, "write");
    await client.execute({ sql: "INSERT INTO schema_migrations (tag, applied_at) VALUES (?, 0)", args: [m.tag] });
  }
  await client.execute(`PRAGMA user_version = ${BEFORE}`);
}

/** The counters recomputed from the subscribers themselves, as the triggers keep them (zero counts left out). */
const fromRows = `SELECT waitlist_id, level, points, bucket, count(*) AS count FROM (
    SELECT waitlist_id, 63 AS level, points, 0 AS bucket FROM subscribers WHERE ranked_seq IS NOT NULL
    UNION ALL SELECT waitlist_id, 16, points, ranked_seq >> 16 FROM subscribers WHERE ranked_seq IS NOT NULL
    UNION ALL SELECT waitlist_id, 8, points, ranked_seq >> 8 FROM subscribers WHERE ranked_seq IS NOT NULL)
  GROUP BY waitlist_id, level, points, bucket ORDER BY waitlist_id, level, points, bucket`;
const kept = "SELECT waitlist_id, level, points, bucket, count FROM rank_counts WHERE count > 0 ORDER BY waitlist_id, level, points, bucket";
const plain = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r }));
/** The line in rank order (points descending, then confirmation number), and each id's position in it. */
const LINE = "SELECT id FROM subscribers WHERE ranked_seq IS NOT NULL ORDER BY points DESC, ranked_seq ASC";
const bySort = (line: Record<string, unknown>[]) => new Map(line.map((r, i) => [String(r.id), i + 1]));

/** Every subscriber's position from the counters is its place in `expected` (null, pending, when absent). */
async function expectPositions(db: Db, expected: Map<string, number>) {
  const rows = await db.rows<{ id: string; position: number | null }>(sql`SELECT s.id, ${positionOf("s")} AS position FROM subscribers s`);
  expect(rows.length).toBe(3001);
  for (const r of rows) expect([r.id, r.position === null ? null : Number(r.position)]).toEqual([r.id, expected.get(r.id) ?? null]);
}
/** The rows of the tables 0013 rebuilds besides the rank counters, in key order. */
const OTHERS = {
  daily_stats: "SELECT waitlist_id, date, sign_ups, views FROM daily_stats ORDER BY waitlist_id, date",
  view_dedupe: "SELECT waitlist_id, visitor, expires_at FROM view_dedupe ORDER BY waitlist_id, visitor",
  rate_limits: "SELECT subject, window_start, count FROM rate_limits ORDER BY subject, window_start",
};

test.skipIf(engine === "pg")("a ranked line, its daily counts, view dedupe and rate-limit windows migrate with every row and position; triggers and upserts work afterwards", async () => {
  expect(BEFORE).toBeGreaterThan(0);
  const url = `file:${join(dir, "before.db")}`;
  const client = createClient({ url });
  await schemaBefore(client);
  await client.batch(
    [
      "INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('a', 'a', 'business', 0, 0)",
      `INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
        VALUES ('w', 'a', 'wkey', 'w', 'W', 's', 'b', 's', 'b', 'x', 0, 0)`,
      // confirmation numbers up to 69,000 cross a 65536-block; every seventh is ahead with more points; one is pending
      `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 3000)
        INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, updated_at)
        SELECT 's' || i, 'w', 's' || i || '@x.io', 'confirmed', 'unknown', CASE WHEN i % 7 = 0 THEN 80 ELSE 50 END, i * 23, 'c' || i, 't' || i, 'api', i, i FROM k`,
      `INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, referral_code, sign_up_token, joined_with, joined_at, updated_at)
        VALUES ('pending', 'w', 'p@x.io', 'pending', 'unknown', 0, 'cp', 'tp', 'api', 0, 0)`,
      "INSERT INTO daily_stats (waitlist_id, date, sign_ups, views) VALUES ('w', '2026-11-30', 4, 17)",
      "INSERT INTO view_dedupe (waitlist_id, visitor, expires_at) VALUES ('w', 'visitor-a', 100), ('w', 'visitor-b', 200)",
      "INSERT INTO rate_limits (subject, window_start, count) VALUES ('ip:1.2.3.4:signup', 60000, 3), ('key:k:api', 60000, 9), ('key:k:api', 120000, 1)",
    ],
    "write",
  );
  const counters = plain((await client.execute(kept)).rows);
  const positions = bySort((await client.execute(LINE)).rows);
  expect(counters).toEqual(plain((await client.execute(fromRows)).rows));
  const others = Object.fromEntries(await Promise.all(Object.entries(OTHERS).map(async ([t, q]) => [t, plain((await client.execute(q)).rows)] as const)));
  // the sign-ups' own day (joined_at 1..3000 ms: 1970-01-01) and the one written above
  expect(others.daily_stats.length).toBe(2);
  client.close();

  const db = await openDatabase({ url });
  try {
    for (const name of ["rank_counts", ...Object.keys(OTHERS)]) {
      const [table] = await db.rows<{ sql: string }>(sql`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ${name}`);
      expect([name, table.sql.endsWith("WITHOUT ROWID")]).toEqual([name, true]);
    }
    for (const [t, q] of Object.entries(OTHERS)) expect([t, plain(await db.rows(sql.raw(q)))]).toEqual([t, others[t]]);
    // their indexes are there again (the pruning jobs' reads)
    const indexes = await db.rows<{ name: string }>(sql`SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('view_dedupe_expires_idx', 'rate_limits_window_idx')`);
    expect(indexes.length).toBe(2);
    expect(plain(await db.rows(sql.raw(kept)))).toEqual(counters);
    await expectPositions(db, positions);

    // the triggers after the migration: a new confirmed subscriber, a move, a confirmation, a removal
    await db.exec(sql`INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, updated_at)
      VALUES ('new', 'w', 'new@x.io', 'confirmed', 'unknown', 50, 69001, 'cn', 'tn', 'api', 0, 0)`);
    await db.exec(sql`UPDATE subscribers SET points = 200 WHERE id = 's1500'`);
    await db.exec(sql`UPDATE subscribers SET status = 'confirmed', seq = 69002 WHERE id = 'pending'`);
    await db.exec(sql`DELETE FROM subscribers WHERE id = 's14'`);
    expect(plain(await db.rows(sql.raw(kept)))).toEqual(plain(await db.rows(sql.raw(fromRows))));
    // the new subscriber and the confirmation above each counted a sign-up on their day (joined_at 0: 1970-01-01)
    const [day] = await db.rows<{ sign_ups: number }>(sql`SELECT sign_ups FROM daily_stats WHERE waitlist_id = 'w' AND date = '1970-01-01'`);
    expect(Number(day.sign_ups)).toBe(Number(others.daily_stats.find((r) => r.date === "1970-01-01")!.sign_ups) + 2);
    // an upsert finds its row by the key: the rate-limit window counts on
    await db.exec(sql`INSERT INTO rate_limits (subject, window_start, count) VALUES ('key:k:api', 60000, 1) ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limits.count + 1`);
    const [window] = await db.rows<{ count: number }>(sql`SELECT count FROM rate_limits WHERE subject = 'key:k:api' AND window_start = 60000`);
    expect(Number(window.count)).toBe(10);
    // all 3,001 ranked now (one added, one confirmed, one removed)
    await expectPositions(db, bySort(await db.rows(sql.raw(LINE))));
  } finally {
    await db.close();
  }
});
