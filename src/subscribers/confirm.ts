// Double opt-in confirmation (spec: Subscriber state table): following the emailed link confirms once,
// ranks by confirmation order, credits the referrer now, and sends the welcome email if enabled.
import { eq, sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";
import { lockLine } from "./lock";
import type { Waitlist } from "../http/api";
import { nothing, type Dispatch } from "../outbox/events";
import { judge, referrerSignals, type FraudReason, type ReferrerSignals } from "./fraud";
import { confirmation } from "./signup";

interface Pending {
  id: string;
  waitlist_id: string;
  status: string;
  sign_up_token: string;
  referrer_id: string | null;
  ip_address: string | null;
  fingerprint: string | null;
  joined_at: number;
  /** Read by truthiness: 0/1 on SQLite, a boolean on PostgreSQL. */
  fraud_checks: number | boolean;
}

/** What a confirmation link names, for its page (a GET changes nothing: issue 16); null for an unknown link. */
export async function findByConfirmToken(db: Db, confirmToken: string): Promise<{ status: "pending" | "confirmed"; signUpToken: string; w: Waitlist } | null> {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(confirmToken)) return null;
  const [sub] = await db.rows<{ status: "pending" | "confirmed"; sign_up_token: string; waitlist_id: string }>(
    sql`SELECT status, sign_up_token, waitlist_id FROM subscribers WHERE confirm_token = ${confirmToken}`,
  );
  if (!sub) return null;
  const { waitlists } = db.t;
  const [w] = await db.select().from(waitlists).where(eq(waitlists.id, sub.waitlist_id));
  return w ? { status: sub.status, signUpToken: sub.sign_up_token, w } : null;
}

/** The thank-you token to redirect to, or null for an unknown link. A second click only redirects. */
export async function confirmSubscriber(db: Db, confirmToken: string, dispatch: Dispatch): Promise<{ signUpToken: string } | null> {
  const [sub] = await db.rows<Pending>(sql`SELECT id, waitlist_id, status, sign_up_token, referrer_id, ip_address, fingerprint, joined_at, fraud_checks
    FROM subscribers WHERE confirm_token = ${confirmToken}`);
  if (!sub) return null;
  if (sub.status !== "pending") return { signUpToken: sub.sign_up_token };

  const at = now();
  const referral = sub.referrer_id ? await referralDecision(db, sub, at) : null;
  const out = nothing();
  const done = await db.tx(async (tx) => {
    // re-read under the lock: of two clicks at once, one confirms and the other only redirects (PostgreSQL: the
    // row lock makes the second wait and read the status the first left; SQLite: the write lock, taken at BEGIN)
    // the line's lock order (./lock.ts): the waitlist's row (also before `last_seq + 1`), then the subscriber's,
    // then the referrer's (a delete of it waits, or has happened and no referral is recorded)
    await tx.rows(lockLine(tx, sub.waitlist_id));
    const [current] = await tx.rows<{ status: string }>(sql`SELECT status FROM subscribers WHERE id = ${sub.id}${tx.d.forUpdate}`);
    if (current?.status !== "pending") return false;
    if (referral) await tx.rows(sql`SELECT 1 FROM subscribers WHERE id = ${referral.referrerId}${tx.d.forUpdate}`);
    const { waitlists } = tx.t;
    const [w] = await tx.select().from(waitlists).where(eq(waitlists.id, sub.waitlist_id));
    await tx.write(confirmation(w, sub.id, at, sql`TRUE`, referral, out, "subscriber.confirmed"));
    return true;
  });
  if (done) dispatch(out.ids);
  return { signUpToken: sub.sign_up_token };
}

/** The fraud rules of DESIGN §4, judged at confirmation, when the referral would be credited. */
async function referralDecision(db: Db, sub: Pending, at: number): Promise<{ referrerId: string; reason: FraudReason | null } | null> {
  // the IP rule counts the sign-ups before the referee's own, in the 24 h before it, as it would have at sign-up
  const referee = { ip: sub.ip_address, fingerprint: sub.fingerprint, excludeId: sub.id, joinedAt: Number(sub.joined_at) };
  const [r] = await db.rows<ReferrerSignals>(referrerSignals(sql`r.id = ${sub.referrer_id}`, sub.waitlist_id, referee, at));
  if (!r) return null; // the referrer is gone or not confirmed
  return { referrerId: r.id, reason: sub.fraud_checks ? judge(referee, r) : null };
}
