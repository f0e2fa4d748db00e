// The top referrers (issue 11's status page, issue 46's API): confirmed subscribers with at least one referral, most
// referrals first, ties by confirmation order; shown by the first word of their name or their masked email.
import { sql } from "drizzle-orm";
import type { Db } from "../db/db";
import { maskEmail } from "../log";

export interface Leader {
  name: string | null;
  email: string;
  referral_count: number;
  points: number;
}

/** A leader as anyone may see them: the first word of the name, or the email masked (`j***@gmail.com`). */
export const publicName = (l: { name: string | null; email: string }) => l.name?.trim().split(/\s+/)[0]?.slice(0, 30) || maskEmail(l.email);

/** Read through `subscribers_referrals_idx` (waitlist, referral_count). */
export const topReferrers = (db: Db, waitlistId: string, limit: number) =>
  db.rows<Leader>(sql`SELECT name, email, referral_count, points FROM subscribers
    WHERE waitlist_id = ${waitlistId} AND seq IS NOT NULL AND referral_count > 0 ORDER BY referral_count DESC, seq ASC LIMIT ${limit}`);
