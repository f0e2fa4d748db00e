-- The counter tables as tables WITHOUT ROWID: each row is stored in its primary key's B-tree, so a counter is
-- found, read and updated in one B-tree. As rowid tables every counter was a seek in the key's index and another
-- in the table, and every upsert changed both: a position at 1M subscribers sums up to ~270 rank counters, 56 us
-- against 33 us, and every sign-up moves three rank counters and a daily count (bench/README.md, issue 19). The
-- same holds for the rate-limit windows (one upsert per limited request) and the view dedupe (one per counted
-- view). The triggers that keep the rank counters and daily counts name those tables, so they are dropped first
-- and made again as 0010 made them; the tables' other indexes are made again as 0000 and 0001 made them.
DROP TRIGGER `subscribers_ranked_insert`;
--> statement-breakpoint
DROP TRIGGER `subscribers_ranked_update`;
--> statement-breakpoint
DROP TRIGGER `subscribers_ranked_delete`;
--> statement-breakpoint
CREATE TABLE `rank_counts_new` (
	`waitlist_id` text NOT NULL,
	`level` integer NOT NULL,
	`points` integer NOT NULL,
	`bucket` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`waitlist_id`, `level`, `points`, `bucket`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `rank_counts_new` (waitlist_id, level, points, bucket, count) SELECT waitlist_id, level, points, bucket, count FROM `rank_counts`;
--> statement-breakpoint
DROP TABLE `rank_counts`;
--> statement-breakpoint
ALTER TABLE `rank_counts_new` RENAME TO `rank_counts`;
--> statement-breakpoint
CREATE TABLE `daily_stats_new` (
	`waitlist_id` text NOT NULL,
	`date` text NOT NULL,
	`sign_ups` integer DEFAULT 0 NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`waitlist_id`, `date`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `daily_stats_new` (waitlist_id, date, sign_ups, views) SELECT waitlist_id, date, sign_ups, views FROM `daily_stats`;
--> statement-breakpoint
DROP TABLE `daily_stats`;
--> statement-breakpoint
ALTER TABLE `daily_stats_new` RENAME TO `daily_stats`;
--> statement-breakpoint
CREATE TABLE `view_dedupe_new` (
	`waitlist_id` text NOT NULL,
	`visitor` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`waitlist_id`, `visitor`),
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `view_dedupe_new` (waitlist_id, visitor, expires_at) SELECT waitlist_id, visitor, expires_at FROM `view_dedupe`;
--> statement-breakpoint
DROP TABLE `view_dedupe`;
--> statement-breakpoint
ALTER TABLE `view_dedupe_new` RENAME TO `view_dedupe`;
--> statement-breakpoint
CREATE INDEX `view_dedupe_expires_idx` ON `view_dedupe` (`expires_at`);
--> statement-breakpoint
CREATE TABLE `rate_limits_new` (
	`subject` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`subject`, `window_start`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `rate_limits_new` (subject, window_start, count) SELECT subject, window_start, count FROM `rate_limits`;
--> statement-breakpoint
DROP TABLE `rate_limits`;
--> statement-breakpoint
ALTER TABLE `rate_limits_new` RENAME TO `rate_limits`;
--> statement-breakpoint
CREATE INDEX `rate_limits_window_idx` ON `rate_limits` (`window_start`);
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_insert` AFTER INSERT ON `subscribers` WHEN NEW.seq IS NOT NULL BEGIN
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    SELECT NEW.waitlist_id, l.level, NEW.points, NEW.ranked_seq >> l.level, 1
    FROM (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) l WHERE NEW.ranked_seq IS NOT NULL
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + 1;
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, NEW.seq) WHERE id = NEW.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    VALUES (NEW.waitlist_id, strftime('%Y-%m-%d', coalesce(NEW.confirmed_at, NEW.joined_at) / 1000, 'unixepoch'), 1, 0)
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_update` AFTER UPDATE OF points, seq, access ON `subscribers`
  WHEN OLD.points IS NOT NEW.points OR OLD.seq IS NOT NEW.seq OR OLD.access IS NOT NEW.access BEGIN
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 8 AND points = OLD.points AND bucket = OLD.ranked_seq >> 8;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 16 AND points = OLD.points AND bucket = OLD.ranked_seq >> 16;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 63 AND points = OLD.points AND bucket = 0;
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    SELECT NEW.waitlist_id, l.level, NEW.points, NEW.ranked_seq >> l.level, 1
    FROM (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) l WHERE NEW.ranked_seq IS NOT NULL
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + 1;
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, NEW.seq)
    WHERE OLD.seq IS NULL AND NEW.seq IS NOT NULL AND id = NEW.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    SELECT NEW.waitlist_id, strftime('%Y-%m-%d', coalesce(NEW.confirmed_at, NEW.joined_at) / 1000, 'unixepoch'), 1, 0 WHERE OLD.seq IS NULL AND NEW.seq IS NOT NULL
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_delete` AFTER DELETE ON `subscribers` WHEN OLD.seq IS NOT NULL BEGIN
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 8 AND points = OLD.points AND bucket = OLD.ranked_seq >> 8;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 16 AND points = OLD.points AND bucket = OLD.ranked_seq >> 16;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.ranked_seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 63 AND points = OLD.points AND bucket = 0;
  UPDATE waitlists SET subscribers_count = subscribers_count - 1 WHERE id = OLD.waitlist_id;
END;
