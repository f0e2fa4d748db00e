// Positions from the order-statistic structure `rank_counts` (DESIGN §7): never by counting the rows ahead.
// Rank order is points descending, then confirmation sequence ascending (DESIGN §4).
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Around } from "../db/template";
import { dayOf } from "../clock";

// The counters are kept by triggers on `subscribers` (drizzle/0005_rank_triggers.sql), and for a merged INSERT of
// sign-ups on the embedded file by deferredCounters below: level 63 holds one count per points value (bucket 0);
// levels 16 and 8 count blocks of 65536 and 256 confirmation numbers.

/**
 * The 1-based position of the subscriber row aliased `s` (null while pending): the rows ahead are
 * read from at most (distinct points values + 2 x 256) counters and 256 index entries.
 */
export const positionOf = (s: string): SQL => sql.raw(`CASE WHEN ${s}.ranked_seq IS NULL THEN NULL ELSE 1
  + (SELECT coalesce(sum(count), 0) FROM rank_counts WHERE waitlist_id = ${s}.waitlist_id AND level = 63 AND points > ${s}.points)
  + (SELECT coalesce(sum(count), 0) FROM rank_counts WHERE waitlist_id = ${s}.waitlist_id AND level = 16 AND points = ${s}.points AND bucket < (${s}.ranked_seq >> 16))
  + (SELECT coalesce(sum(count), 0) FROM rank_counts WHERE waitlist_id = ${s}.waitlist_id AND level = 8 AND points = ${s}.points
       AND bucket >= ((${s}.ranked_seq >> 16) << 8) AND bucket < (${s}.ranked_seq >> 8))
  + (SELECT count(*) FROM subscribers r WHERE r.waitlist_id = ${s}.waitlist_id AND r.points = ${s}.points
       AND r.ranked_seq >= ((${s}.ranked_seq >> 8) << 8) AND r.ranked_seq < ${s}.ranked_seq)
  END`);

/** Which counter row holds the k-th (0-based) ranked entry, and how many of it come before. */
async function locate(db: Db, where: SQL, order: SQL, k: number): Promise<{ key: number; before: number } | null> {
  const [row] = await db.rows<{ key: number; before: number }>(sql`
    SELECT key, before FROM (
      SELECT ${order} AS key, count, sum(count) OVER (ORDER BY ${order} ${order === BUCKET ? sql`ASC` : sql`DESC`} ROWS UNBOUNDED PRECEDING) - count AS before
      FROM rank_counts WHERE ${where} AND count > 0
    ) AS c WHERE before + count > ${k} ORDER BY before LIMIT 1`);
  return row ? { key: Number(row.key), before: Number(row.before) } : null;
}
const POINTS = sql.raw("points");
const BUCKET = sql.raw("bucket");

/**
 * The (points, seq) of the subscriber at 0-based rank k, found by walking the counters down
 * (points value, then 65536-block, then 256-block, then at most 256 index entries); null past the end.
 */
export async function keyAtRank(db: Db, waitlistId: string, k: number): Promise<{ points: number; seq: number } | null> {
  const p = await locate(db, sql`waitlist_id = ${waitlistId} AND level = 63`, POINTS, k);
  if (!p) return null;
  const points = p.key;
  const b16 = await locate(db, sql`waitlist_id = ${waitlistId} AND level = 16 AND points = ${points}`, BUCKET, k - p.before);
  if (!b16) return null;
  const k16 = k - p.before - b16.before;
  const b8 = await locate(
    db,
    sql`waitlist_id = ${waitlistId} AND level = 8 AND points = ${points} AND bucket >= ${b16.key * 256} AND bucket < ${(b16.key + 1) * 256}`,
    BUCKET,
    k16,
  );
  if (!b8) return null;
  const [row] = await db.rows<{ seq: number }>(sql`
    SELECT ranked_seq AS seq FROM subscribers WHERE waitlist_id = ${waitlistId} AND points = ${points} AND ranked_seq >= ${b8.key * 256}
    ORDER BY ranked_seq LIMIT 1 OFFSET ${k16 - b8.before}`);
  return row ? { points, seq: Number(row.seq) } : null;
}

/** The waitlist's counters deferred, and the place a subscriber of points `?` would take last in line now. */
const DEFER = `INSERT INTO counters_deferred (waitlist_id) VALUES (?)
  RETURNING (SELECT coalesce(sum(count), 0) + 1 FROM rank_counts WHERE waitlist_id = counters_deferred.waitlist_id AND level = 63 AND points >= ?) AS last`;
const UNDEFER = "DELETE FROM counters_deferred WHERE waitlist_id = ?";
/** The rank counters' levels (drizzle/0014_deferred_counters.sql): level 63's one bucket counts a points value. */
const LEVELS = [8, 16, 63];
/** `count` more in each of the given counters; texts by the number of counters (a merged INSERT moves 3-6). */
const rankUpserts = new Map<number, string>();
const rankUpsert = (n: number) => {
  let text = rankUpserts.get(n);
  if (text === undefined) {
    text = `INSERT INTO rank_counts (waitlist_id, level, points, bucket, count) VALUES ${Array(n).fill("(?, ?, ?, ?, ?)").join(", ")}
      ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + excluded.count`;
    rankUpserts.set(n, text);
  }
  return text;
};
const DAY_UPSERT = `INSERT INTO daily_stats (waitlist_id, date, sign_ups, views) VALUES (?, ?, ?, 0)
  ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + excluded.sign_ups`;
const WAITLIST_COUNTS = "UPDATE waitlists SET subscribers_count = subscribers_count + ?, last_seq = max(last_seq, ?) WHERE id = ?";

/** What a merged sign-up INSERT returns of each new row (signup.ts's RETURNING; the position NULL), numbers as numbers. */
interface NewRow {
  position: number | null;
  ranked_seq: number | null;
  seq: number | null;
  counted_at: number;
}

/**
 * What goes around a run of INSERTs of many new subscribers of one waitlist, all of points `points`, on the embedded
 * file (issue 19): the insert trigger wrote five counters for each row, and each row's RETURNING read its position
 * from them, together most of SQLite's work a row. Before the run, a row of `counters_deferred` tells the trigger to
 * leave this waitlist's counters alone, and the last place in line is read. After it, each new ranked row's position
 * is that place plus the ranked rows before it (the k-th row's seq is `last_seq + k`); then the counters the trigger
 * would have moved (its rank counters, daily count, subscriber count and `last_seq`) move once for all the rows, and
 * the row of `counters_deferred` goes. All in the run's transaction.
 */
export function deferredCounters(waitlistId: string, points: number): Around {
  // the place before the INSERT: every ranked subscriber of as many points or more is ahead
  let last = 0;
  return {
    before(run) {
      last = Number(run({ sql: DEFER, args: [waitlistId, points] })[0].last);
    },
    after(inserted, run) {
      run({ sql: UNDEFER, args: [waitlistId] });
      const rows = inserted as unknown as NewRow[];
      if (rows.length === 0) return;
      const ranks = new Map<string, [number, number, number]>();
      const days = new Map<string, number>();
      let ahead = 0;
      let counted = 0;
      let top = 0;
      for (const row of rows) {
        if (row.ranked_seq !== null) {
          row.position = last + ahead++;
          for (const level of LEVELS) {
            const bucket = level === 63 ? 0 : Math.floor(row.ranked_seq / 2 ** level);
            const counter = ranks.get(`${level}:${bucket}`);
            if (counter) counter[2]++;
            else ranks.set(`${level}:${bucket}`, [level, bucket, 1]);
          }
        }
        if (row.seq === null) continue;
        counted++;
        top = Math.max(top, row.seq);
        const day = dayOf(row.counted_at);
        days.set(day, (days.get(day) ?? 0) + 1);
      }
      if (ranks.size) run({ sql: rankUpsert(ranks.size), args: [...ranks.values()].flatMap(([level, bucket, n]) => [waitlistId, level, points, bucket, n]) });
      for (const [day, n] of days) run({ sql: DAY_UPSERT, args: [waitlistId, day, n] });
      if (counted) run({ sql: WAITLIST_COUNTS, args: [counted, top, waitlistId] });
    },
  };
}
