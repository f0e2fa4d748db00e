// The counters scenario's model of the rules (spec; DESIGN §4; docs/decisions.md): what every subscriber, referral,
// point, position and counter must be after the operations applied so far, whatever the server says.
import { batch, count } from "./run";

type Access = "waiting" | "invited" | "joined" | "rejected";
type Reason = "self_referral" | "duplicate_fingerprint" | "duplicate_ip" | "velocity";

/** A subscriber as the rules make it. Ids, codes and tokens are opaque: read from the rows after each step. */
export interface Sub {
  email: string;
  status: "pending" | "confirmed";
  access: Access;
  points: number;
  /** Order of confirmation. Among one batch's concurrent confirmations any order is right: it is read back from the rows. */
  seq: number | null;
  seqUnknown: boolean;
  referralCount: number;
  /**
   * The code given at sign-up when it named a confirmed subscriber of this waitlist (docs/decisions.md: an unknown
   * code is stored as null). Neither the spec nor DESIGN says what it shows once that referrer is deleted: the code
   * stays as given, as the rows keep it.
   */
  referredBy: string | null;
  /** The referrer (email) while it exists: deleting it cuts the link. */
  referrer: string | null;
  /** The referral this subscriber gave its referrer: credited, or withheld for a fraud reason (DESIGN §4). */
  referral: { referrer: string; credited: boolean; reason: Reason | null; points: number } | null;
  finalPosition: number | null;
  unsubscribed: boolean;
  tags: Set<string>;
  ip: string;
  fingerprint: string | null;
  fraudChecks: boolean;
  /** Order of sign-up in the model (a judged referee signs up alone, so it is exact for every rule that needs it). */
  born: number;
  awarded: Set<number>;
  id: string;
  code: string;
  signUpToken: string;
  confirmToken: string | null;
  inviteToken: string | null;
}

export interface Wl {
  label: string;
  id: string;
  key: string;
  path: string;
  doubleOptIn: boolean;
  referralEnabled: boolean;
  signupPoints: number;
  referralPoints: number;
  offset: number;
  milestones: { referrals: number; reward: string; tag: string | null }[];
  subs: Map<string, Sub>;
  gone: Sub[];
  visitors: Set<string>;
  /** Confirmations ever: the daily counts are a history, not taken back by a delete (docs/decisions.md). */
  confirmations: number;
  maxSeq: number;
  tags: Set<string>;
}

let born = 0;
const UNKNOWN_SEQ = Number.MAX_SAFE_INTEGER; // the newest confirmation: last among equal points until its seq is read

/** DESIGN §4: points descending, then order of confirmation; only confirmed subscribers still waiting are in line. */
export const lineOf = (w: Wl) =>
  [...w.subs.values()].filter((x) => x.status === "confirmed" && x.access === "waiting").sort((a, b) => b.points - a.points || a.seq! - b.seq!);
export const positionIn = (w: Wl, email: string) => lineOf(w).findIndex((x) => x.email === email) + 1 || null;
const signupPoints = (w: Wl) => (w.referralEnabled ? w.signupPoints : 0);
export const synced = (w: Wl, f: (x: Sub) => boolean = () => true) => [...w.subs.values()].filter((x) => x.id !== "" && f(x));

export function newSub(email: string, ip: string, fingerprint: string | null, fraudChecks: boolean): Sub {
  return {
    email, status: "pending", access: "waiting", points: 0, seq: null, seqUnknown: false, referralCount: 0, referredBy: null, referrer: null,
    referral: null, finalPosition: null, unsubscribed: false, tags: new Set(), ip, fingerprint, fraudChecks, born: ++born, awarded: new Set(),
    id: "", code: "", signUpToken: "", confirmToken: null, inviteToken: null,
  };
}

/** DESIGN §4 fraud rules, in docs/decisions.md's order; the referee itself is left out of the counts. */
function judge(w: Wl, referee: Sub, referrer: Sub): Reason | null {
  if (!referee.fraudChecks) return null;
  if (referee.ip === referrer.ip || (referee.fingerprint !== null && referee.fingerprint === referrer.fingerprint)) return "self_referral";
  const others = [...w.subs.values()].filter((x) => x.email !== referee.email);
  if (referee.fingerprint !== null && others.some((x) => x.fingerprint === referee.fingerprint)) return "duplicate_fingerprint";
  // DESIGN §4: "more than 3 sign-ups from one IP in 24 h ... duplicate_ip for the 4th onwards": earlier sign-ups count
  if (others.filter((x) => x.ip === referee.ip && x.born < referee.born).length >= 3) return "duplicate_ip";
  // the whole run is well inside the 10-minute window
  if (others.filter((x) => x.referral?.referrer === referrer.email && x.referral.credited).length >= 10) return "velocity";
  return null;
}

/** A referral: counted while the program is off too, with 0 points; milestones are reached once (docs/decisions.md). */
function credit(w: Wl, referee: Sub, referrer: Sub) {
  const reason = judge(w, referee, referrer);
  const points = reason === null && w.referralEnabled ? w.referralPoints : 0;
  referee.referral = { referrer: referrer.email, credited: reason === null, reason, points };
  count(`referral ${reason ?? "credited"}`);
  if (reason !== null) return;
  referrer.points += points;
  referrer.referralCount += 1;
  for (const m of w.milestones) {
    if (referrer.referralCount < m.referrals || referrer.awarded.has(m.referrals)) continue;
    referrer.awarded.add(m.referrals);
    count(`milestone ${m.referrals}`);
    if (m.tag) {
      if (!w.tags.has(m.tag.toLowerCase())) batch.fresh.add(m.tag.toLowerCase());
      w.tags.add(m.tag.toLowerCase());
      referrer.tags.add(m.tag.toLowerCase());
    }
  }
}

export function confirm(w: Wl, x: Sub) {
  x.status = "confirmed";
  x.points = signupPoints(w);
  x.seq = UNKNOWN_SEQ;
  x.seqUnknown = true;
  w.confirmations++;
  const r = x.referrer ? w.subs.get(x.referrer) : undefined;
  if (r && r.status === "confirmed") credit(w, x, r);
}

/** DESIGN §4: the referrer loses that referral's points and one referral_count; links to the deleted one are cut. */
export function remove(w: Wl, x: Sub) {
  const r = x.referral?.credited ? w.subs.get(x.referral.referrer) : undefined;
  if (r) {
    r.points -= x.referral!.points;
    r.referralCount -= 1;
  }
  for (const o of w.subs.values()) {
    if (o.referrer === x.email) o.referrer = null;
    if (o.referral?.referrer === x.email) o.referral = null; // its referrals rows go with it
  }
  w.subs.delete(x.email);
  w.gone.push(x);
}
