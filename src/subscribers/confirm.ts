// Double opt-in confirmation (spec: Subscriber state table): following the emailed link confirms once,
// ranks by confirmation order, credits the referrer now, and sends the welcome email if enabled.
import { eq, sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/client";
import { waitlists } from "../db/schema";
import { nothing, type Dispatch } from "../outbox/events";
import { fraudReason, FRAUD_LIMITS, FRAUD_WINDOWS, type FraudReason } from "./fraud";
import { confirmation } from "./signup";

interface Pending {
  id: string;
  waitlist_id: string;
  status: string;
  sign_up_token: string;
  referrer_id: string | null;
  ip_address: string | null;
  fingerprint: string | null;
  fraud_checks: number;
}

/** The thank-you token to redirect to, or null for an unknown link. A second click only redirects. */
export async function confirmSubscriber(db: Db, confirmToken: string, dispatch: Dispatch): Promise<{ signUpToken: string } | null> {
  const [sub] = await db.all<Pending>(sql`SELECT id, waitlist_id, status, sign_up_token, referrer_id, ip_address, fingerprint, fraud_checks
    FROM subscribers WHERE confirm_token = ${confirmToken}`);
  if (!sub) return null;
  if (sub.status !== "pending") return { signUpToken: sub.sign_up_token };

  const at = now();
  const referral = sub.referrer_id ? await referralDecision(db, sub, at) : null;
  const out = nothing();
  const done = await db.transaction(
    async (tx) => {
      // re-read under the write lock: of two clicks at once, one confirms and the other only redirects
      const [current] = await tx.all<{ status: string }>(sql`SELECT status FROM subscribers WHERE id = ${sub.id}`);
      if (current?.status !== "pending") return false;
      const [w] = await tx.select().from(waitlists).where(eq(waitlists.id, sub.waitlist_id));
      await tx.run(sql`UPDATE waitlists SET last_seq = last_seq + 1 WHERE id = ${w.id}`);
      await tx.run(sql`UPDATE subscribers SET seq = (SELECT last_seq FROM waitlists WHERE id = ${w.id}) WHERE id = ${sub.id}`);
      for (const statement of confirmation(w, sub.id, at, sql`1`, referral, out, "subscriber.confirmed")) await tx.run(statement);
      return true;
    },
    { behavior: "immediate" },
  );
  if (done) dispatch(out.ids);
  return { signUpToken: sub.sign_up_token };
}

/** The fraud rules of DESIGN §4, judged at confirmation, when the referral would be credited. */
async function referralDecision(db: Db, sub: Pending, at: number): Promise<{ referrerId: string; reason: FraudReason | null } | null> {
  const [r] = await db.all<{ ip_address: string | null; fingerprint: string | null; ip_count: number; fp_count: number; velocity: number }>(sql`
    SELECT ip_address, fingerprint,
      (SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE waitlist_id = ${sub.waitlist_id} AND ip_address = ${sub.ip_address ?? ""} AND id != ${sub.id}
        AND joined_at > ${at - FRAUD_WINDOWS.ipMs} LIMIT ${FRAUD_LIMITS.signupsPerIp})) AS ip_count,
      (SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE waitlist_id = ${sub.waitlist_id} AND fingerprint = ${sub.fingerprint ?? ""} AND id != ${sub.id} LIMIT 1)) AS fp_count,
      (SELECT count(*) FROM (SELECT 1 FROM referrals WHERE referrer_id = ${sub.referrer_id} AND credited = 1 AND created_at > ${at - FRAUD_WINDOWS.velocityMs}
        LIMIT ${FRAUD_LIMITS.creditsPerWindow})) AS velocity
    FROM subscribers WHERE id = ${sub.referrer_id} AND status = 'confirmed'`);
  if (!r) return null; // the referrer is gone or not confirmed
  const reason = sub.fraud_checks
    ? fraudReason({
        ip: sub.ip_address,
        fingerprint: sub.fingerprint,
        referrer: { ip: r.ip_address, fingerprint: r.fingerprint },
        signupsFromIp: Number(r.ip_count),
        fingerprintUses: Number(r.fp_count),
        referrerRecentCredits: Number(r.velocity),
      })
    : null;
  return { referrerId: sub.referrer_id!, reason };
}
