-- Issue 19: the embedded writer inserts a turn's sign-ups to one waitlist as one INSERT of many rows, and half of
-- SQLite's work a row was this trigger (its five counter writes, once per row). While a row of `counters_deferred`
-- names a waitlist, inserting its subscribers leaves the counters alone: the writer puts the row there before such an
-- INSERT, brings the counters up to date for all its rows at once right after (`deferredCounters` in
-- src/subscribers/rank.ts, the same counts as below), and deletes the row again, all in the one transaction. No
-- other connection ever sees a row here. PostgreSQL inserts its sign-ups one at a time and has no such table.
CREATE TABLE `counters_deferred` (
	`waitlist_id` text PRIMARY KEY NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
DROP TRIGGER `subscribers_ranked_insert`;
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_insert` AFTER INSERT ON `subscribers`
  WHEN NEW.seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM counters_deferred WHERE waitlist_id = NEW.waitlist_id) BEGIN
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    SELECT NEW.waitlist_id, l.level, NEW.points, NEW.ranked_seq >> l.level, 1
    FROM (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) l WHERE NEW.ranked_seq IS NOT NULL
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + 1;
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, NEW.seq) WHERE id = NEW.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    VALUES (NEW.waitlist_id, strftime('%Y-%m-%d', coalesce(NEW.confirmed_at, NEW.joined_at) / 1000, 'unixepoch'), 1, 0)
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + 1;
END;
