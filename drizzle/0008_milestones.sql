CREATE TABLE `milestone_rewards` (
	`subscriber_id` text NOT NULL,
	`referrals` integer NOT NULL,
	`waitlist_id` text NOT NULL,
	`reward` text NOT NULL,
	`tag` text,
	`award_id` text NOT NULL,
	`reached_at` integer NOT NULL,
	PRIMARY KEY(`subscriber_id`, `referrals`),
	FOREIGN KEY (`subscriber_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`waitlist_id`) REFERENCES `waitlists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `milestone_rewards_award_id_unique` ON `milestone_rewards` (`award_id`);--> statement-breakpoint
ALTER TABLE `waitlists` ADD `milestones` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `milestone_subject` text DEFAULT 'You unlocked a reward on the {{waitlist_name}} waitlist' NOT NULL;--> statement-breakpoint
ALTER TABLE `waitlists` ADD `milestone_body` text DEFAULT 'Hi {{name}},

You have referred {{referral_count}} friends to {{waitlist_name}}. Your reward: {{reward}}

Keep sharing your link: {{referral_link}}' NOT NULL;