-- What follows from a subscriber's rank fields is kept by the database itself, in the same statement:
-- the rank counters (DESIGN §7), the waitlist's confirmed total and last confirmation number, and the
-- daily sign-up count. A subscriber is ranked once it has a seq (confirmed). No write path can forget
-- a counter, and a sign-up is one statement instead of five.
CREATE TRIGGER `subscribers_ranked_insert` AFTER INSERT ON `subscribers` WHEN NEW.seq IS NOT NULL BEGIN
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    VALUES (NEW.waitlist_id, 8, NEW.points, NEW.seq >> 8, 1), (NEW.waitlist_id, 16, NEW.points, NEW.seq >> 16, 1), (NEW.waitlist_id, 63, NEW.points, 0, 1)
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + 1;
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, NEW.seq) WHERE id = NEW.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    VALUES (NEW.waitlist_id, strftime('%Y-%m-%d', coalesce(NEW.confirmed_at, NEW.joined_at) / 1000, 'unixepoch'), 1, 0)
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_update` AFTER UPDATE OF points, seq ON `subscribers`
  WHEN OLD.points IS NOT NEW.points OR OLD.seq IS NOT NEW.seq BEGIN
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 8 AND points = OLD.points AND bucket = OLD.seq >> 8;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 16 AND points = OLD.points AND bucket = OLD.seq >> 16;
  UPDATE rank_counts SET count = count - 1
    WHERE OLD.seq IS NOT NULL AND waitlist_id = OLD.waitlist_id AND level = 63 AND points = OLD.points AND bucket = 0;
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    SELECT NEW.waitlist_id, l.level, NEW.points, NEW.seq >> l.level, 1
    FROM (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) l WHERE NEW.seq IS NOT NULL
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = count + 1;
  -- confirmed now (pending until this update)
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, NEW.seq)
    WHERE OLD.seq IS NULL AND NEW.seq IS NOT NULL AND id = NEW.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    SELECT NEW.waitlist_id, strftime('%Y-%m-%d', coalesce(NEW.confirmed_at, NEW.joined_at) / 1000, 'unixepoch'), 1, 0 WHERE OLD.seq IS NULL AND NEW.seq IS NOT NULL
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = sign_ups + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `subscribers_ranked_delete` AFTER DELETE ON `subscribers` WHEN OLD.seq IS NOT NULL BEGIN
  UPDATE rank_counts SET count = count - 1 WHERE waitlist_id = OLD.waitlist_id AND level = 8 AND points = OLD.points AND bucket = OLD.seq >> 8;
  UPDATE rank_counts SET count = count - 1 WHERE waitlist_id = OLD.waitlist_id AND level = 16 AND points = OLD.points AND bucket = OLD.seq >> 16;
  UPDATE rank_counts SET count = count - 1 WHERE waitlist_id = OLD.waitlist_id AND level = 63 AND points = OLD.points AND bucket = 0;
  UPDATE waitlists SET subscribers_count = subscribers_count - 1 WHERE id = OLD.waitlist_id;
END;
