// Page views (DESIGN §4 Analytics): one per visitor per 24 h; a visitor without an id is a salted daily hash of IP and UA.
import { createHmac } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { dayOf, now, sha256Hex, token } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { badRequest } from "../http/errors";

export const DEDUPE_MS = 24 * 3_600_000;
export const DAILY_MAX_DAYS = 365;


/** The secret per database: its read, and its value once read (knownView decides without waiting for it). */
const secrets = new WeakMap<Db, { read: Promise<string>; value?: string }>();

/** The instance-wide secret behind the daily salt, kept in the database so every instance agrees. */
function saltSecret(db: Db): Promise<string> {
  const known = secrets.get(db);
  if (known) return known.read;
  const secret: { read: Promise<string>; value?: string } = {
    read: readSaltSecret(db).then(
      (value) => (secret.value = value),
      (err) => {
        secrets.delete(db);
        throw err;
      },
    ),
  };
  secrets.set(db, secret);
  return secret.read;
}

async function readSaltSecret(db: Db): Promise<string> {
  await db.exec(sql`INSERT INTO meta (key, value) VALUES ('view_salt_secret', ${token(43)}) ON CONFLICT (key) DO NOTHING`);
  return (await db.rows<{ value: string }>(sql`SELECT value FROM meta WHERE key = 'view_salt_secret'`))[0]!.value;
}

const salts = new Map<string, string>();

/** A visitor key: the client's id, or a hash of IP and User-Agent under a salt that changes every UTC day (no raw IP kept). */
export async function visitorKey(db: Db, visitorId: string | null | undefined, ip: string, userAgent: string, at = now()): Promise<string> {
  if (visitorId) return `id:${visitorId}`;
  const day = dayOf(at);
  const secret = await saltSecret(db);
  const slot = saltSlot(secret, day);
  let salt = salts.get(slot);
  if (salt === undefined) {
    salt = createHmac("sha256", secret).update(day).digest("hex");
    if (salts.size >= 16) salts.clear();
    salts.set(slot, salt);
  }
  // issue 19: a visitor's repeat views of the day reuse the hash
  const seen = hashSlot(salt, ip, userAgent);
  let key = hashed.get(seen);
  if (key === undefined) {
    key = `h:${sha256Hex(seen)}`;
    if (hashed.size >= 5_000) hashed.delete(hashed.keys().next().value!);
    hashed.set(seen, key);
  }
  return key;
}
const hashed = new Map<string, string>();
/** Where the day's salt and a visitor's hash are kept (salts, hashed). */
const saltSlot = (secret: string, day: string) => `${secret}|${day}`;
const hashSlot = (salt: string, ip: string, userAgent: string) => `${salt}|${ip}|${userAgent}`;

/**
 * Issue 19: true when this process knows, without waiting for anything, that the visitor without an id was counted
 * on the waitlist within the last 24 h (its key, salt and dedupe row are all known here); false when it must ask
 * (visitorKey, then logView). A published page's repeat views skip two promises and their turns (~10% of its time).
 */
export function knownView(db: Db, waitlistId: string, ip: string, userAgent: string, at = now()): boolean {
  const secret = secrets.get(db)?.value;
  const salt = secret === undefined ? undefined : salts.get(saltSlot(secret, dayOf(at)));
  const key = salt === undefined ? undefined : hashed.get(hashSlot(salt, ip, userAgent));
  return key !== undefined && (knownVisitors.get(db)?.get(`${waitlistId}|${key}`) ?? 0) > at;
}

/**
 * Issue 19: the visitors this process knows to be counted, with the time their dedupe row expires. Until then that
 * row stands (only a row past its expiry is renewed or pruned), so a repeat view within it is answered here
 * without a write; the database stays the judge of everything else, across instances.
 */
const knownVisitors = new WeakMap<Db, Map<string, number>>();
const KNOWN_MAX = 20_000;

function remember(db: Db, key: string, expiresAt: number): void {
  let known = knownVisitors.get(db);
  if (!known) knownVisitors.set(db, (known = new Map()));
  if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value!);
  known.set(key, expiresAt);
}

/** Issue 46: where a view came from (sources.ts `sourceOf`), and whether through a referral link. */
export interface ViewFrom {
  source: string | null;
  medium: string | null;
  campaign: string | null;
  referral: boolean;
}
const FROM_NOWHERE: ViewFrom = { source: null, medium: null, campaign: null, referral: false };

/**
 * Counts a view unless the visitor was counted in the last 24 h, in one transaction; the counters
 * move only when the dedupe row was inserted or renewed (the row count of the statement before: two views of one
 * visitor in the same millisecond leave the same dedupe row behind, so that state could not tell them apart).
 * A counted view is also counted under its source (issue 46); one from nowhere writes nothing more.
 */
export async function logView(db: Db, waitlistId: string, visitor: string, from: ViewFrom = FROM_NOWHERE, at = now()): Promise<boolean> {
  const known = `${waitlistId}|${visitor}`;
  if ((knownVisitors.get(db)?.get(known) ?? 0) > at) return false;
  const day = dayOf(at);
  const referral = from.referral ? 1 : 0;
  const sourced = from.source !== null || from.medium !== null || from.campaign !== null;
  const [upsert] = await db.write([
    sql`INSERT INTO view_dedupe (waitlist_id, visitor, expires_at) VALUES (${waitlistId}, ${visitor}, ${at + DEDUPE_MS})
      ON CONFLICT (waitlist_id, visitor) DO UPDATE SET expires_at = excluded.expires_at WHERE view_dedupe.expires_at <= ${at} RETURNING expires_at`,
    sql`UPDATE waitlists SET views_count = views_count + 1 WHERE id = ${waitlistId} AND ${db.d.prevChanged} = 1`,
    sql`INSERT INTO daily_stats (waitlist_id, date, sign_ups, views, referral_views)
      SELECT ${waitlistId}, ${day}, 0, 1, ${referral} WHERE ${db.d.prevChanged} = 1
      ON CONFLICT (waitlist_id, date) DO UPDATE SET views = daily_stats.views + 1, referral_views = daily_stats.referral_views + excluded.referral_views`,
    ...(sourced
      ? [
          sql`INSERT INTO source_views (waitlist_id, date, source, medium, campaign, views)
            SELECT ${waitlistId}, ${day}, ${from.source ?? ""}, ${from.medium ?? ""}, ${from.campaign ?? ""}, 1 WHERE ${db.d.prevChanged} = 1
            ON CONFLICT (waitlist_id, date, source, medium, campaign) DO UPDATE SET views = source_views.views + 1`,
        ]
      : []),
  ]);
  if (upsert.length === 1) {
    remember(db, known, at + DEDUPE_MS);
    return true;
  }
  // counted before (maybe by another instance): learn until when
  const [row] = await db.rows<{ expires_at: number }>(sql`SELECT expires_at FROM view_dedupe WHERE waitlist_id = ${waitlistId} AND visitor = ${visitor}`);
  if (row) remember(db, known, Number(row.expires_at));
  return false;
}

export const pruneViewDedupe = (db: Db, at = now()) => db.exec(sql`DELETE FROM view_dedupe WHERE expires_at <= ${at}`);

/** A waitlist's confirmed subscribers and views as they are now (a request's `Waitlist` leaves counters out). */
export async function countersOf(db: Db, waitlistId: string): Promise<{ subscribers: number; views: number }> {
  const { waitlists } = db.t;
  const [row] = await db.select({ subscribers: waitlists.subscribersCount, views: waitlists.viewsCount }).from(waitlists).where(eq(waitlists.id, waitlistId));
  return row ?? { subscribers: 0, views: 0 };
}

export async function stats(db: Db, waitlist: Waitlist) {
  const counters = await countersOf(db, waitlist.id);
  return { subscribers_total: counters.subscribers, views_total: counters.views, referral_program_enabled: waitlist.referralEnabled };
}

/** DESIGN §9: the last `days` UTC dates, oldest first, zero-filled. */
export async function dailyStats(db: Db, waitlistId: string, days = 30, at = now()) {
  if (!(Number.isInteger(days) && days >= 1 && days <= DAILY_MAX_DAYS)) throw badRequest(`days must be an integer from 1 to ${DAILY_MAX_DAYS}`);
  const dates = Array.from({ length: days }, (_, i) => dayOf(at - (days - 1 - i) * 86_400_000));
  const rows = await db.rows<{ date: string; sign_ups: number; views: number }>(
    sql`SELECT date, sign_ups, views FROM daily_stats WHERE waitlist_id = ${waitlistId} AND date >= ${dates[0]} AND date <= ${dates[days - 1]}`,
  );
  const byDate = new Map(rows.map((r) => [r.date, r]));
  return dates.map((date) => ({ date, sign_ups: Number(byDate.get(date)?.sign_ups ?? 0), views: Number(byDate.get(date)?.views ?? 0) }));
}
