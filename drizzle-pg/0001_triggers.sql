-- The PostgreSQL form of drizzle/0005, 0007 and 0010 (issue 18): the database itself keeps the rank counters
-- (DESIGN §7), the waitlist's confirmed total and last confirmation number, and the daily sign-up count, in the
-- statement that changes a subscriber; and it bumps a waitlist's version on any change but its counters.
-- Differences from SQLite: greatest() for max(a, b), IS DISTINCT FROM for IS NOT, to_char for strftime, and
-- level 63's bucket is written as 0 (an int4 shifted by 63 is undefined in C; SQLite's 64-bit shift gives 0).
CREATE FUNCTION rank_counts_add(w text, pts integer, rs integer, delta integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rank_counts (waitlist_id, level, points, bucket, count)
    VALUES (w, 8, pts, rs >> 8, delta), (w, 16, pts, rs >> 16, delta), (w, 63, pts, 0, delta)
    ON CONFLICT (waitlist_id, level, points, bucket) DO UPDATE SET count = rank_counts.count + EXCLUDED.count;
END $$;
--> statement-breakpoint
CREATE FUNCTION utc_date(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')
$$;
--> statement-breakpoint
CREATE FUNCTION subscribers_confirmed(s subscribers) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = greatest(last_seq, s.seq) WHERE id = s.waitlist_id;
  INSERT INTO daily_stats (waitlist_id, date, sign_ups, views)
    VALUES (s.waitlist_id, utc_date(coalesce(s.confirmed_at, s.joined_at)), 1, 0)
    ON CONFLICT (waitlist_id, date) DO UPDATE SET sign_ups = daily_stats.sign_ups + 1;
END $$;
--> statement-breakpoint
CREATE FUNCTION subscribers_ranked_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.ranked_seq IS NOT NULL THEN PERFORM rank_counts_add(NEW.waitlist_id, NEW.points, NEW.ranked_seq, 1); END IF;
  PERFORM subscribers_confirmed(NEW);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER subscribers_ranked_insert AFTER INSERT ON subscribers FOR EACH ROW WHEN (NEW.seq IS NOT NULL)
  EXECUTE FUNCTION subscribers_ranked_insert();
--> statement-breakpoint
CREATE FUNCTION subscribers_ranked_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.ranked_seq IS NOT NULL THEN PERFORM rank_counts_add(OLD.waitlist_id, OLD.points, OLD.ranked_seq, -1); END IF;
  IF NEW.ranked_seq IS NOT NULL THEN PERFORM rank_counts_add(NEW.waitlist_id, NEW.points, NEW.ranked_seq, 1); END IF;
  -- confirmed now (pending until this update)
  IF OLD.seq IS NULL AND NEW.seq IS NOT NULL THEN PERFORM subscribers_confirmed(NEW); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER subscribers_ranked_update AFTER UPDATE OF points, seq, access ON subscribers FOR EACH ROW
  WHEN (OLD.points IS DISTINCT FROM NEW.points OR OLD.seq IS DISTINCT FROM NEW.seq OR OLD.access IS DISTINCT FROM NEW.access)
  EXECUTE FUNCTION subscribers_ranked_update();
--> statement-breakpoint
CREATE FUNCTION subscribers_ranked_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.ranked_seq IS NOT NULL THEN PERFORM rank_counts_add(OLD.waitlist_id, OLD.points, OLD.ranked_seq, -1); END IF;
  UPDATE waitlists SET subscribers_count = subscribers_count - 1 WHERE id = OLD.waitlist_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER subscribers_ranked_delete AFTER DELETE ON subscribers FOR EACH ROW WHEN (OLD.seq IS NOT NULL)
  EXECUTE FUNCTION subscribers_ranked_delete();
--> statement-breakpoint
-- Any change to a waitlist other than its counters bumps its version, whoever makes it (instances keep the row
-- in memory while the version matches). PostgreSQL can assign NEW, so this is a BEFORE trigger.
CREATE FUNCTION waitlists_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := OLD.version + 1;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER waitlists_version BEFORE UPDATE ON waitlists FOR EACH ROW
  WHEN (NEW.version = OLD.version AND NEW.subscribers_count = OLD.subscribers_count AND NEW.views_count = OLD.views_count AND NEW.last_seq = OLD.last_seq)
  EXECUTE FUNCTION waitlists_version();
--> statement-breakpoint
-- Ids and tokens sort byte-wise, as in SQLite, so keyset cursors (id > ?) agree on both engines (DIALECTS.md).
ALTER TABLE subscribers ALTER COLUMN id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE outbox ALTER COLUMN id TYPE text COLLATE "C";
