DROP INDEX `subscribers_rank_idx`;--> statement-breakpoint
DROP INDEX `subscribers_pending_idx`;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `access` text DEFAULT 'waiting' NOT NULL;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `ranked_seq` integer GENERATED ALWAYS AS (CASE WHEN access = 'waiting' THEN seq END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `final_position` integer;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `invite_token` text;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `invited_at` integer;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `invite_expires_at` integer;--> statement-breakpoint
ALTER TABLE `subscribers` ADD `accepted_at` integer;--> statement-breakpoint
CREATE INDEX `subscribers_ranked_idx` ON `subscribers` (`waitlist_id`,"points" DESC,`ranked_seq`);--> statement-breakpoint
CREATE INDEX `subscribers_unranked_idx` ON `subscribers` (`waitlist_id`,`joined_at`) WHERE "subscribers"."ranked_seq" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_invite_token_idx` ON `subscribers` (`invite_token`) WHERE "subscribers"."invite_token" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `invitation_subject` text DEFAULT 'Your invitation to {{waitlist_name}}' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `invitation_body` text DEFAULT 'Hi {{name}},

Your wait is over: you are invited to {{waitlist_name}}.

Accept your invitation: {{invite_link}}' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `invite_expiry_days` integer DEFAULT 14 NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `invite_redirect_url` text;--> statement-breakpoint
-- Issue 11: only subscribers waiting in line are ranked (ranked_seq); every confirmed one is counted (seq).
DROP TRIGGER `subscribers_ranked_insert`;
--> statement-breakpoint
DROP TRIGGER `subscribers_ranked_update`;
--> statement-breakpoint
DROP TRIGGER `subscribers_ranked_delete`;
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
