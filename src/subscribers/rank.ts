// Positions from the order-statistic structure `rank_counts` (DESIGN §7): never by counting the rows ahead.
// Rank order is points descending, then confirmation sequence ascending (DESIGN §4).
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";

// The counters are kept by the database (triggers on `subscribers`, per engine; a merged INSERT of sign-ups on the
// embedded file by src/db/sqlite/sign-ups.ts): level 63 holds one count per points value (bucket 0);
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
