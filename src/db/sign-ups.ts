// The INSERT of one new subscriber, as every sign-up writes it (DESIGN §4, §7), on either engine. A store builds it
// once (`signUpInserts`); the embedded one also says how a turn's sign-ups to one waitlist run as one INSERT of many
// rows (sqlite/sign-ups.ts), which no service needs to know.
import { sql, type SQL } from "drizzle-orm";
import { foldNameOrNull } from "./fold";
import { statementTemplate, type RowsOption } from "./template";
import type { Origin } from "../analytics/sources";

/** A new subscriber's values (the service's; the statement reads the referrer's code and the next seq itself). */
export interface NewSubscriber {
  id: string;
  waitlistId: string;
  email: string;
  name: string | null;
  phone: string | null;
  status: "pending" | "confirmed";
  deliverability: string;
  /** Its points when confirmed at once; 0 while pending. */
  points: number;
  referralCode: string;
  signUpToken: string;
  confirmToken: string | null;
  /** A referrer read before the write: NULL is stored when it was deleted since. */
  referrerId: string | null;
  metadata: string;
  /** Issue 46: the answers to the waitlist's questions, JSON. */
  answers: string;
  referringDomain: string | null;
  /** Issue 46: the UTM parameters and referring host it came with. */
  origin: Origin;
  ip: string | null;
  fingerprint: string | null;
  fraudChecks: boolean;
  country: string | null;
  city: string | null;
  timezone: string | null;
  joinedWith: string;
  joinedAt: number;
  confirmedAt: number | null;
}

/** What the INSERT answers: the new row (its position while confirmed), or no row when the email was there already. */
export interface InsertedSubscriber {
  id: string;
  status: "pending" | "confirmed";
  points: number;
  position: number | null;
  referral_code: string;
  sign_up_token: string;
}

/** Its position from the per-points counters alone: it holds the highest confirmation number, so it is last among its points. */
export const lastOfPoints = (s: string, self: "counted" | "not counted yet") =>
  `(SELECT coalesce(sum(count), 0) ${self === "counted" ? "" : "+ 1 "}FROM rank_counts WHERE waitlist_id = ${s}.waitlist_id AND level = 63 AND points >= ${s}.points)`;

/**
 * What the insert answers. RETURNING is computed before the row's AFTER INSERT trigger adds it to the counters
 * (SQLite runs RETURNING first; PostgreSQL's AFTER ROW triggers run after it too), hence the + 1; the sign-up tests
 * hold this to the spec. `seq`, `ranked_seq` and `counted_at` are for what a merged INSERT does after it.
 */
const returning = (alone: (fragment: SQL) => SQL) =>
  sql`RETURNING id, status, points, referral_code, sign_up_token,
  ${alone(sql.raw(`CASE WHEN ranked_seq IS NULL THEN NULL ELSE ${lastOfPoints("subscribers", "not counted yet")} END`))} AS position,
  ranked_seq, seq, coalesce(confirmed_at, joined_at) AS counted_at`;

/** The INSERT's values, by name (statementTemplate); `place` is the row's place among merged rows (1 alone). */
const VALUES = [
  "id", "waitlistId", "email", "name", "nameKey", "phone", "status", "deliverability", "points", "referralCode", "signUpToken", "confirmToken", "referrerId",
  "metadata", "answers", "referringDomain", "utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent", "referrerHost", "ip", "fingerprint", "fraudChecks", "country", "city", "timezone", "joinedWith", "joinedAt", "confirmedAt", "place",
] as const;
export type SignUpValue = (typeof VALUES)[number];

/**
 * How a store may merge consecutive INSERTs of one kind (confirmed or not); undefined: never. The template's key is
 * `id`, its place `place`.
 */
export type MergeRows = (confirmed: boolean) => Omit<RowsOption<SignUpValue>, "key" | "place"> | undefined;

/**
 * The INSERT of a pending subscriber (no seq) or of one confirmed at once (the next confirmation number), referred
 * or not, its text put together once per kind. A referrer's code and id are read as the write finds them: NULL when
 * it was deleted since the sign-up read it (there is no referral then, only a sign-up).
 */
function insertTemplate(confirmed: boolean, referred: boolean, merge: MergeRows) {
  const rows = merge(confirmed);
  return statementTemplate(
    VALUES,
    (v, row, alone) => {
      // merged with other sign-ups (a store's business), the k-th row takes last_seq + k
      const seq = confirmed ? sql`(SELECT last_seq + ${v.place} FROM waitlists WHERE id = ${v.waitlistId})` : sql`NULL`;
      const referrer = (column: "referral_code" | "id") => (referred ? sql`(SELECT ${sql.raw(column)} FROM subscribers WHERE id = ${v.referrerId})` : sql`NULL`);
      return sql`INSERT INTO subscribers (id, waitlist_id, email, name, name_key, phone, status, deliverability, points, seq, referral_code, sign_up_token,
        confirm_token, referred_by, referrer_id, metadata, answers, referring_domain, utm_source, utm_medium, utm_campaign, utm_term, utm_content, referrer_host, ip_address,
        fingerprint, fraud_checks, country, city, timezone, joined_with, joined_at, confirmed_at, updated_at)
      VALUES ${row(sql`(${v.id}, ${v.waitlistId}, ${v.email}, ${v.name}, ${v.nameKey}, ${v.phone}, ${v.status}, ${v.deliverability}, ${v.points}, ${seq}, ${v.referralCode},
        ${v.signUpToken}, ${v.confirmToken}, ${referrer("referral_code")}, ${referrer("id")}, ${v.metadata}, ${v.answers}, ${v.referringDomain}, ${v.utmSource}, ${v.utmMedium},
        ${v.utmCampaign}, ${v.utmTerm}, ${v.utmContent}, ${v.referrerHost}, ${v.ip},
        ${v.fingerprint}, ${v.fraudChecks}, ${v.country}, ${v.city}, ${v.timezone}, ${v.joinedWith}, ${v.joinedAt}, ${v.confirmedAt}, ${v.joinedAt})`)}
      ON CONFLICT (waitlist_id, email) DO NOTHING ${returning(alone)}`;
    },
    // one row inserted, or none; RETURNING gives the id first
    { oneRow: true, rows: rows && { key: "id", place: "place", ...rows } },
  );
}

/** A store's `insertSubscriber`: the statement for one new subscriber, to run in a `write`. */
export function signUpInserts(merge: MergeRows = () => undefined): (s: NewSubscriber) => SQL {
  const inserts = [insertTemplate(false, false, merge), insertTemplate(false, true, merge), insertTemplate(true, false, merge), insertTemplate(true, true, merge)];
  return ({ origin: o, ...s }) =>
    inserts[(s.status === "confirmed" ? 2 : 0) + (s.referrerId ? 1 : 0)]({
      ...s,
      nameKey: foldNameOrNull(s.name),
      utmSource: o.utm_source,
      utmMedium: o.utm_medium,
      utmCampaign: o.utm_campaign,
      utmTerm: o.utm_term,
      utmContent: o.utm_content,
      referrerHost: o.referrer_host,
      place: 1,
    });
}
