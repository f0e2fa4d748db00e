// Milestone rewards (issue 11): when a credited referral brings a referrer to a threshold of the
// waitlist's milestones, the referrer gets that reward once (the primary key of milestone_rewards),
// its tag, a milestone.reached webhook and an email, all in the referral's own transaction.
import { sql, type SQL } from "drizzle-orm";
import { sortableToken, token } from "../clock";
import { foldName } from "../db/fold";
import type { Waitlist } from "../http/api";
import { email, webhookEvent, type Outgoing } from "../outbox/events";
import { milestonesOf } from "../waitlists/service";

/**
 * Statements to run after the referrer's referral_count went up (conditional on `onlyIf`). Every
 * milestone is tried: the insert happens only at or past its threshold and only the first time;
 * the rest follows from that row having been written by this transaction (its award id).
 */
export function milestonesReached(w: Waitlist, referrerId: string, at: number, onlyIf: SQL, out: Outgoing): SQL[] {
  const statements: SQL[] = [];
  for (const m of milestonesOf(w)) {
    const awardId = sortableToken(20);
    const awarded = sql`EXISTS (SELECT 1 FROM milestone_rewards WHERE award_id = ${awardId})`;
    statements.push(sql`INSERT INTO milestone_rewards (subscriber_id, referrals, waitlist_id, reward, tag, award_id, reached_at)
      SELECT id, ${m.referrals}, waitlist_id, ${m.reward}, ${m.tag}, ${awardId}, ${at} FROM subscribers
      WHERE id = ${referrerId} AND referral_count >= ${m.referrals} AND ${onlyIf}
      ON CONFLICT (subscriber_id, referrals) DO NOTHING`);
    if (m.tag) {
      statements.push(
        sql`INSERT INTO tags (id, waitlist_id, name, name_key, color, created_at) SELECT ${token(16)}, ${w.id}, ${m.tag}, ${foldName(m.tag)}, 'purple', ${at}
          WHERE ${awarded} AND NOT EXISTS (SELECT 1 FROM tags WHERE waitlist_id = ${w.id} AND name_key = ${foldName(m.tag)})
          ON CONFLICT DO NOTHING`,
        sql`INSERT INTO subscriber_tags (subscriber_id, tag_id)
          SELECT ${referrerId}, id FROM tags WHERE waitlist_id = ${w.id} AND name_key = ${foldName(m.tag)} AND ${awarded}
          ON CONFLICT DO NOTHING`,
      );
    }
    webhookEvent(out, w, "milestone.reached", referrerId, awarded, { relatedId: String(m.referrals) });
    email(out, w, "milestone", referrerId, awarded, String(m.referrals));
  }
  return statements;
}
