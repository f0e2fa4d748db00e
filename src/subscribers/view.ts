// Reads subscriber rows with their position and tags, and shapes the spec's Subscriber object.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import type { Dialect } from "../db/dialect";
import type { Waitlist } from "../http/api";
import { positionOf } from "./rank";

/** A subscribers row as read by `selectSubscribers` (snake_case columns, plus position and tags). */
export interface SubscriberRow {
  id: string;
  waitlist_id: string;
  email: string;
  name: string | null;
  phone: string | null;
  status: "pending" | "confirmed";
  deliverability: string;
  points: number;
  seq: number | null;
  referral_code: string;
  sign_up_token: string;
  confirm_token: string | null;
  referred_by: string | null;
  referrer_id: string | null;
  referral_count: number;
  metadata: string;
  referring_domain: string | null;
  ip_address: string | null;
  fingerprint: string | null;
  country: string | null;
  city: string | null;
  timezone: string | null;
  joined_with: string;
  joined_at: number;
  confirmed_at: number | null;
  updated_at: number;
  access: "waiting" | "invited" | "joined" | "rejected";
  ranked_seq: number | null;
  final_position: number | null;
  invite_token: string | null;
  invited_at: number | null;
  invite_expires_at: number | null;
  accepted_at: number | null;
  unsubscribed_at: number | null;
  email_status: "ok" | "bounced" | "complained";
  answers: string;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  referrer_host: string | null;
  position: number | null;
  tags_json: string;
}

/** The tags of the subscriber row aliased `s`, by name, as JSON text. */
const tagsOf = (d: Dialect): SQL =>
  sql`(SELECT ${d.jsonObjects({ id: sql.raw("t.id"), name: sql.raw("t.name"), color: sql.raw("t.color") }, d.bytewise(sql.raw("t.name_key")))}
    FROM subscriber_tags st JOIN tags t ON t.id = st.tag_id WHERE st.subscriber_id = s.id)`;

/** The SELECT of subscribers matching `where` (on alias `s`), with position and tags. */
export const subscribersQuery = (d: Dialect, where: SQL): SQL =>
  sql`SELECT s.*, ${positionOf("s")} AS position, ${tagsOf(d)} AS tags_json FROM subscribers s WHERE ${where}`;

export function selectSubscribers(db: Db, where: SQL) {
  return db.rows<SubscriberRow>(subscribersQuery(db.d, where));
}

/**
 * A page of subscribers: `page` (a SELECT of subscriber rows with its own ORDER BY and LIMIT) is
 * materialized first, so positions and tags are computed for the page's rows only.
 */
export function selectPage(db: Db, page: SQL, orderBy: SQL, withPosition = true) {
  return db.rows<SubscriberRow>(
    sql`WITH page AS MATERIALIZED (${page}) SELECT s.*, ${withPosition ? positionOf("s") : sql`NULL`} AS position, ${tagsOf(db.d)} AS tags_json FROM page s ORDER BY ${orderBy}`,
  );
}

/** The invite link of a token (issue 11: `{BASE_URL}/i/{token}`). */
export const inviteLink = (baseUrl: string, inviteToken: string) => `${baseUrl}/i/${inviteToken}`;

export const thankYouUrl = (baseUrl: string, token: string) => `${baseUrl}/t/${token}`;

/** Issue 16: the one-click unsubscribe link names the subscriber by its sign-up token (docs/decisions.md). */
export const unsubscribeUrl = (baseUrl: string, signUpToken: string) => `${baseUrl}/u/${signUpToken}`;

/** Issue 11: `pending` (unconfirmed), then `waiting`, `invited`, `joined` or `rejected`. */
export const statusOf = (row: Pick<SubscriberRow, "status" | "access">): "pending" | SubscriberRow["access"] => (row.status === "pending" ? "pending" : row.access);

/**
 * spec: Subscriber. Points, referral code and sign-up token exist only once confirmed (DESIGN §4); a
 * position only while waiting in line, and `final_position` once invited, joined or rejected (issue 11).
 */
export function subscriberView(row: SubscriberRow, waitlist: Pick<Waitlist, "positionOffset">, baseUrl: string) {
  const confirmed = row.status === "confirmed";
  const ranked = confirmed && row.access === "waiting" && row.position !== null;
  return {
    id: row.id,
    email: row.email,
    status: statusOf(row),
    deliverability: row.deliverability,
    name: row.name,
    phone: row.phone,
    ...(ranked ? { position: Number(row.position), inflated_position: Number(row.position) + waitlist.positionOffset } : {}),
    ...(confirmed && !ranked ? { final_position: row.final_position === null ? null : Number(row.final_position) } : {}),
    ...(confirmed ? { points: Number(row.points), referral_code: row.referral_code } : {}),
    referred_by: row.referred_by,
    referral_count: Number(row.referral_count),
    ...(confirmed ? { sign_up_token: row.sign_up_token, thank_you_url: thankYouUrl(baseUrl, row.sign_up_token) } : {}),
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    tags: JSON.parse(row.tags_json ?? "[]") as { id: string; name: string; color: string }[],
    referring_domain: row.referring_domain,
    ip_address: row.ip_address,
    country: row.country,
    city: row.city,
    timezone: row.timezone,
    joined_with: row.joined_with,
    joined_at: Number(row.joined_at),
    unsubscribed_at: row.unsubscribed_at === null ? null : Number(row.unsubscribed_at),
    email_status: row.email_status,
    answers: JSON.parse(row.answers ?? "{}") as Record<string, unknown>,
    utm: { source: row.utm_source, medium: row.utm_medium, campaign: row.utm_campaign, term: row.utm_term, content: row.utm_content },
    referrer_host: row.referrer_host,
  };
}

export type SubscriberView = ReturnType<typeof subscriberView>;
