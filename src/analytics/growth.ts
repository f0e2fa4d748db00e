// Issue 46: the numbers a launch runs on: where views and sign-ups come from (`stats/sources`), the referral loop
// as a funnel with its viral coefficient (`stats/funnel`), and the status page's share clicks that feed it.
import { sql } from "drizzle-orm";
import { dayOf, now } from "../clock";
import type { Db } from "../db/db";
import { badRequest, conflict, notFound } from "../http/errors";
import { DAILY_MAX_DAYS } from "./service";

const DAY_MS = 86_400_000;

/** The share buttons' channels a status page counts (`POST /t/{token}/share`). */
export const SHARE_CHANNELS = ["x", "facebook", "linkedin", "whatsapp", "telegram", "reddit", "email", "sms", "copy", "native"] as const;
export type ShareChannel = (typeof SHARE_CHANNELS)[number];

/** The last `days` UTC dates, oldest first, and the first one's start (ms). */
function window(days: number, at: number) {
  if (!(Number.isInteger(days) && days >= 1 && days <= DAILY_MAX_DAYS)) throw badRequest(`days must be an integer from 1 to ${DAILY_MAX_DAYS}`);
  const dates = Array.from({ length: days }, (_, i) => dayOf(at - (days - 1 - i) * DAY_MS));
  return { dates, from: Date.parse(`${dates[0]}T00:00:00Z`), first: dates[0]!, last: dates[days - 1]! };
}

const n = (v: unknown) => Number(v ?? 0);

export interface SourceRow {
  source: string | null;
  medium: string | null;
  campaign: string | null;
  views: number;
  sign_ups: number;
  confirmed: number;
}

/**
 * Views, sign-ups and confirmed sign-ups of the last `days` UTC days by source, medium and campaign: a view as the
 * page counted it (the visitor's first in 24 h), a sign-up by when it joined (confirmed: those of them confirmed
 * now). Visits and sign-ups from nowhere (no UTM parameters, no referring host) are the row of nulls. Most sign-ups
 * first.
 */
export async function sourceStats(db: Db, waitlistId: string, days = 30, at = now()): Promise<SourceRow[]> {
  const w = window(days, at);
  const [views, total, signUps] = await Promise.all([
    db.rows<{ source: string; medium: string; campaign: string; views: number }>(
      sql`SELECT source, medium, campaign, sum(views) AS views FROM source_views
        WHERE waitlist_id = ${waitlistId} AND date >= ${w.first} AND date <= ${w.last} GROUP BY source, medium, campaign`,
    ),
    db.rows<{ views: number }>(sql`SELECT sum(views) AS views FROM daily_stats WHERE waitlist_id = ${waitlistId} AND date >= ${w.first} AND date <= ${w.last}`),
    db.rows<{ source: string | null; medium: string | null; campaign: string | null; sign_ups: number; confirmed: number }>(
      sql`SELECT coalesce(utm_source, referrer_host) AS source, utm_medium AS medium, utm_campaign AS campaign, count(*) AS sign_ups,
        sum(CASE WHEN status = 'confirmed' THEN 1 ELSE 0 END) AS confirmed
        FROM subscribers WHERE waitlist_id = ${waitlistId} AND joined_at >= ${w.from} GROUP BY 1, 2, 3`,
    ),
  ]);
  const rows = new Map<string, SourceRow>();
  const row = (source: string | null, medium: string | null, campaign: string | null) => {
    const key = JSON.stringify([source, medium, campaign]);
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { source, medium, campaign, views: 0, sign_ups: 0, confirmed: 0 }));
    return r;
  };
  let sourced = 0;
  for (const v of views) {
    row(v.source || null, v.medium || null, v.campaign || null).views += n(v.views);
    sourced += n(v.views);
  }
  for (const s of signUps) {
    const r = row(s.source, s.medium, s.campaign);
    r.sign_ups += n(s.sign_ups);
    r.confirmed += n(s.confirmed);
  }
  // views from nowhere are the counted views that no source took
  const direct = Math.max(0, n(total[0]?.views) - sourced);
  if (direct > 0) row(null, null, null).views += direct;
  return [...rows.values()].sort((a, b) => b.sign_ups - a.sign_ups || b.views - a.views || (a.source ?? "").localeCompare(b.source ?? ""));
}

interface FunnelNumbers {
  views: number;
  sign_ups: number;
  confirmed: number;
  shares: number;
  referrers: number;
  /** Invitations: share clicks (one per subscriber, channel and day) and counted visits through a referral link. */
  invitations: number;
  /** Sign-ups that came through a referral link. */
  referred_sign_ups: number;
  k_factor: number;
}

/**
 * K = invitations per sign-up x conversion of invitations into referred sign-ups; each factor 0 when there is nothing
 * to divide (so K is 0 without invitations, whatever else happened). Four decimals.
 */
export function kFactor(invitations: number, signUps: number, referred: number): number {
  const perSignUp = signUps > 0 ? invitations / signUps : 0;
  const conversion = invitations > 0 ? referred / invitations : 0;
  return Math.round(perSignUp * conversion * 10_000) / 10_000;
}

const numbers = (v: Omit<FunnelNumbers, "k_factor">): FunnelNumbers => ({ ...v, k_factor: kFactor(v.invitations, v.sign_ups, v.referred_sign_ups) });

/**
 * The referral loop of the last `days` UTC days, overall and per day: counted views, sign-ups (by the day they
 * joined), those of them confirmed, subscribers who shared (a share-button click), subscribers who referred at least
 * one of the sign-ups, and K.
 */
export async function funnel(db: Db, waitlistId: string, days = 30, at = now()) {
  const w = window(days, at);
  const dayNo = sql.raw(`joined_at / ${DAY_MS}`);
  const [daily, joined, shared, overall] = await Promise.all([
    db.rows<{ date: string; views: number; referral_views: number }>(
      sql`SELECT date, views, referral_views FROM daily_stats WHERE waitlist_id = ${waitlistId} AND date >= ${w.first} AND date <= ${w.last}`,
    ),
    db.rows<{ day: number; sign_ups: number; confirmed: number; referred: number; referrers: number }>(
      sql`SELECT ${dayNo} AS day, count(*) AS sign_ups, sum(CASE WHEN status = 'confirmed' THEN 1 ELSE 0 END) AS confirmed,
        sum(CASE WHEN referred_by IS NULL THEN 0 ELSE 1 END) AS referred, count(DISTINCT referred_by) AS referrers
        FROM subscribers WHERE waitlist_id = ${waitlistId} AND joined_at >= ${w.from} GROUP BY ${dayNo}`,
    ),
    db.rows<{ date: string; shares: number; clicks: number }>(
      sql`SELECT date, count(DISTINCT subscriber_id) AS shares, count(*) AS clicks FROM share_clicks
        WHERE waitlist_id = ${waitlistId} AND date >= ${w.first} AND date <= ${w.last} GROUP BY date`,
    ),
    // who shared and who referred over the whole window (a subscriber of several days counts once)
    db.rows<{ shares: number; referrers: number }>(
      sql`SELECT (SELECT count(DISTINCT subscriber_id) FROM share_clicks WHERE waitlist_id = ${waitlistId} AND date >= ${w.first} AND date <= ${w.last}) AS shares,
        (SELECT count(DISTINCT referred_by) FROM subscribers WHERE waitlist_id = ${waitlistId} AND joined_at >= ${w.from}) AS referrers`,
    ),
  ]);
  const views = new Map(daily.map((r) => [r.date, r]));
  const joins = new Map(joined.map((r) => [dayOf(n(r.day) * DAY_MS), r]));
  const shares = new Map(shared.map((r) => [r.date, r]));
  const dayRows = w.dates.map((date) => {
    const v = views.get(date);
    const j = joins.get(date);
    const s = shares.get(date);
    return {
      date,
      ...numbers({
        views: n(v?.views),
        sign_ups: n(j?.sign_ups),
        confirmed: n(j?.confirmed),
        shares: n(s?.shares),
        referrers: n(j?.referrers),
        invitations: n(s?.clicks) + n(v?.referral_views),
        referred_sign_ups: n(j?.referred),
      }),
    };
  });
  const sum = (k: "views" | "sign_ups" | "confirmed" | "invitations" | "referred_sign_ups") => dayRows.reduce((t, d) => t + d[k], 0);
  return {
    ...numbers({
      views: sum("views"),
      sign_ups: sum("sign_ups"),
      confirmed: sum("confirmed"),
      shares: n(overall[0]?.shares),
      referrers: n(overall[0]?.referrers),
      invitations: sum("invitations"),
      referred_sign_ups: sum("referred_sign_ups"),
    }),
    days: dayRows,
  };
}

/**
 * A share-button click on a status page: counted once per subscriber, channel and UTC day as an invitation (more
 * clicks only add to `clicks`). Only a confirmed subscriber has a link to share.
 */
export async function recordShare(db: Db, signUpToken: string, channel: ShareChannel, at = now()): Promise<void> {
  const [sub] = await db.rows<{ id: string; waitlist_id: string; status: string }>(
    sql`SELECT id, waitlist_id, status FROM subscribers WHERE sign_up_token = ${signUpToken}`,
  );
  if (!sub) throw notFound("Unknown status link");
  if (sub.status !== "confirmed") throw conflict("Confirm your email first: there is no referral link to share yet");
  await db.exec(
    sql`INSERT INTO share_clicks (subscriber_id, channel, date, waitlist_id, clicks) VALUES (${sub.id}, ${channel}, ${dayOf(at)}, ${sub.waitlist_id}, 1)
      ON CONFLICT (subscriber_id, channel, date) DO UPDATE SET clicks = share_clicks.clicks + 1`,
  );
}
