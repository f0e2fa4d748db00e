-- Issue 47: every column that holds a subscriber's id sorts byte-wise, as subscribers.id does (0001_triggers.sql). With
-- the default collation beside it, `subscriber_tags.subscriber_id = subscribers.id` could not use the table's key and
-- the tags of each row were a scan of subscriber_tags (an export page of 500: 2,382 ms at 100,000 subscribers, 5 ms after).
ALTER TABLE subscribers ALTER COLUMN referrer_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE referrals ALTER COLUMN referrer_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE referrals ALTER COLUMN referee_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE subscriber_tags ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE share_clicks ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE outbox ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE milestone_rewards ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE broadcast_recipients ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE import_rows ALTER COLUMN subscriber_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE data_requests ALTER COLUMN subscriber_id TYPE text COLLATE "C";
