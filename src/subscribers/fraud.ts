// Referral fraud rules (DESIGN §4): a sign-up is never refused; the referral credit is withheld with a reason.
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
