ALTER TABLE `waitlists` ADD `version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
-- Any change to a waitlist other than its counters (kept by the subscriber triggers and by views)
-- bumps its version, whoever makes it: instances keep the row in memory while the version matches.
CREATE TRIGGER `waitlists_version` AFTER UPDATE ON `waitlists`
  WHEN NEW.version = OLD.version AND NEW.subscribers_count = OLD.subscribers_count AND NEW.views_count = OLD.views_count AND NEW.last_seq = OLD.last_seq
BEGIN
  UPDATE waitlists SET version = version + 1 WHERE id = NEW.id;
END;
