// Referral fraud rules (DESIGN §4): a sign-up is never refused; the referral credit is withheld with a reason.
import { sql, type SQL } from "drizzle-orm";
export type FraudReason = "self_referral" | "duplicate_fingerprint" | "duplicate_ip" | "velocity";

export const FRAUD_WINDOWS = { ipMs: 24 * 3_600_000, velocityMs: 10 * 60_000 };
/** The thresholds: counting stops there (a count need not go past what the rule compares). */
export const FRAUD_LIMITS = { signupsPerIp: 3, creditsPerWindow: 10 };
const MAX_SIGNUPS_PER_IP = FRAUD_LIMITS.signupsPerIp;
const MAX_CREDITS_PER_WINDOW = FRAUD_LIMITS.creditsPerWindow;

export interface FraudSignals {
  ip: string | null;
  fingerprint: string | null;
  referrer: { ip: string | null; fingerprint: string | null };
  /** Earlier sign-ups to this waitlist from `ip` in the last 24 h. */
  signupsFromIp: number;
  /** Other subscribers of this waitlist with `fingerprint`. */
  fingerprintUses: number;
  /** Referrals credited to the referrer in the last 10 minutes. */
  referrerRecentCredits: number;
}

export function fraudReason(s: FraudSignals): FraudReason | null {
  if ((s.ip && s.ip === s.referrer.ip) || (s.fingerprint && s.fingerprint === s.referrer.fingerprint)) return "self_referral";
  if (s.fingerprint && s.fingerprintUses > 0) return "duplicate_fingerprint";
  if (s.ip && s.signupsFromIp >= MAX_SIGNUPS_PER_IP) return "duplicate_ip";
  if (s.referrerRecentCredits >= MAX_CREDITS_PER_WINDOW) return "velocity";
  return null;
}

/** The referrer (confirmed, chosen by `which` on alias `r`) with the counters the rules compare. */
export interface ReferrerSignals {
  id: string;
  ip_address: string | null;
  fingerprint: string | null;
  ip_count: number;
  fp_count: number;
  velocity: number;
}

/**
 * One statement for sign-up and confirmation alike. Each counter stops at the threshold its rule
 * needs, so none grows with the list; `excludeId` leaves the referee itself out of the counts.
 */
export function referrerSignals(
  which: SQL,
  waitlistId: string,
  referee: { ip: string | null; fingerprint: string | null; excludeId?: string; joinedAt?: number },
  at: number,
): SQL {
  const self = referee.excludeId ?? "";
  // "more than 3 sign-ups from one IP in 24 h: the 4th onwards" (DESIGN §4): those before the referee's sign-up, in
  // the 24 h before it; a referee confirmed later is judged by its sign-up, not by who signed up since
  const signedUp = referee.joinedAt ?? at;
  return sql`SELECT r.id, r.ip_address, r.fingerprint,
    (SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE waitlist_id = ${waitlistId} AND ip_address = ${referee.ip ?? ""} AND id != ${self}
      AND joined_at > ${signedUp - FRAUD_WINDOWS.ipMs} AND joined_at <= ${signedUp} LIMIT ${FRAUD_LIMITS.signupsPerIp}) AS x) AS ip_count,
    (SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE waitlist_id = ${waitlistId} AND fingerprint = ${referee.fingerprint ?? ""} AND id != ${self} LIMIT 1) AS x) AS fp_count,
    (SELECT count(*) FROM (SELECT 1 FROM referrals WHERE referrer_id = r.id AND credited = TRUE AND created_at > ${at - FRAUD_WINDOWS.velocityMs}
      LIMIT ${FRAUD_LIMITS.creditsPerWindow}) AS x) AS velocity
    FROM subscribers r WHERE ${which} AND r.status = 'confirmed'`;
}

/** The rules applied to a referee and its referrer's signals. */
export const judge = (referee: { ip: string | null; fingerprint: string | null }, r: ReferrerSignals): FraudReason | null =>
  fraudReason({
    ip: referee.ip,
    fingerprint: referee.fingerprint,
    referrer: { ip: r.ip_address, fingerprint: r.fingerprint },
    signupsFromIp: Number(r.ip_count),
    fingerprintUses: Number(r.fp_count),
    referrerRecentCredits: Number(r.velocity),
  });
