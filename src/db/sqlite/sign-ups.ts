// How the embedded file inserts a turn's sign-ups (issue 19): consecutive INSERTs of new subscribers to one waitlist
// with the same points run as one INSERT of many rows (file-writer.ts), with their counters written once for all the
// rows (deferredCounters) instead of by the insert trigger row by row. The counters' rules are the trigger's
// (drizzle/0005_rank_triggers.sql, 0014_deferred_counters.sql); test/signup.unit.test.ts and the both-engines
// counters scenario compare them with a recount.
import { dayOf } from "../../clock";
import type { MergeRows } from "../sign-ups";
import type { Around } from "../template";

/** Merged when their waitlist and points are the same; a confirmed run has its counters written around it. */
export const mergeSignUps: MergeRows = (confirmed) => ({
  alike: ["waitlistId", "points"],
  around: confirmed ? (v) => deferredCounters(v.waitlistId as string, v.points as number) : undefined,
});

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
