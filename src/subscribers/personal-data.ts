// Issue 47: each person's own data: the document of everything held about a subscriber (for the team's access
// requests, and downloaded by the subscriber from an emailed link), and the daily removal of rejected and joined
// subscribers past the waitlist's retention_days.
import { sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { email, nothing, webhookEvent, type Dispatch } from "../outbox/events";
import { envelope } from "../outbox/render";
import { forgetSubscriber } from "../outbox/store";
import { lockLine } from "./lock";
import { maskEmail } from "../log";
import { selectSubscribers, subscriberView, type SubscriberRow } from "./view";
import { t } from "elysia";
import { Subscriber } from "./model";

/** How long an emailed download link works. */
export const DATA_LINK_MS = 24 * 3_600_000;
/** At most one download email per subscriber in this long (a button pressed again answers the same). */
const DATA_EMAIL_EVERY_MS = 10 * 60_000;

const nullableNumber = t.Union([t.Number(), t.Null()]);
/** The document's schema (GET .../subscribers/{idOrEmail}/data, and the download). */
export const PersonalData = t.Object({
  generated_at: t.Number(),
  waitlist: t.Object({ name: t.String() }),
  subscriber: t.Composite([Subscriber, t.Object({ fingerprint: t.Union([t.String(), t.Null()]), confirmed_at: nullableNumber })]),
  referrals: t.Array(t.Object({ friend: t.String({ description: "Their email, masked" }), credited: t.Boolean(), points: t.Number(), at: t.Number() })),
  rewards: t.Array(t.Object({ referrals: t.Number(), reward: t.String(), reached_at: t.Number() })),
  emails: t.Array(t.Object({ kind: t.String(), subject: t.Union([t.String(), t.Null()]), status: t.String(), created_at: t.Number(), sent_at: nullableNumber })),
  share_clicks: t.Array(t.Object({ channel: t.String(), date: t.String(), clicks: t.Number() })),
});

/** Everything held about the subscriber, as one JSON document (other people in it are masked). */
export async function personalData(db: Db, w: Waitlist, sub: SubscriberRow, baseUrl: string) {
  const [referrals, rewards, emails, shares] = await Promise.all([
    db.rows<{ email: string; credited: boolean | number; points: number; created_at: number }>(
      sql`SELECT s.email, r.credited, r.points, r.created_at FROM referrals r JOIN subscribers s ON s.id = r.referee_id WHERE r.referrer_id = ${sub.id} ORDER BY r.created_at`,
    ),
    db.rows<{ referrals: number; reward: string; reached_at: number }>(sql`SELECT referrals, reward, reached_at FROM milestone_rewards WHERE subscriber_id = ${sub.id} ORDER BY referrals`),
    db.rows<{ topic: string; status: string; payload: string | null; created_at: number; sent_at: number | null }>(
      sql`SELECT topic, status, payload, created_at, sent_at FROM outbox WHERE subscriber_id = ${sub.id} AND kind = 'email' ORDER BY created_at, id`,
    ),
    db.rows<{ channel: string; date: string; clicks: number }>(sql`SELECT channel, date, clicks FROM share_clicks WHERE subscriber_id = ${sub.id} ORDER BY date, channel`),
  ]);
  return {
    generated_at: now(),
    waitlist: { name: w.name },
    subscriber: { ...subscriberView(sub, w, baseUrl), fingerprint: sub.fingerprint, confirmed_at: sub.confirmed_at === null ? null : Number(sub.confirmed_at) },
    referrals: referrals.map((r) => ({ friend: maskEmail(r.email), credited: Boolean(r.credited), points: Number(r.points), at: Number(r.created_at) })),
    rewards: rewards.map((r) => ({ referrals: Number(r.referrals), reward: r.reward, reached_at: Number(r.reached_at) })),
    emails: emails.map((e) => ({
      kind: e.topic,
      subject: e.payload ? ((JSON.parse(e.payload) as { subject?: string }).subject ?? null) : null,
      status: e.status === "pending" ? "queued" : e.status,
      created_at: Number(e.created_at),
      sent_at: e.sent_at === null ? null : Number(e.sent_at),
    })),
    share_clicks: shares.map((c) => ({ channel: c.channel, date: c.date, clicks: Number(c.clicks) })),
  };
}

/**
 * The status page's "Email me my data": a link valid 24 hours, by email (to the address itself: whoever holds the
 * status link must also read that inbox). At most one email in 10 minutes; the answer is the same either way.
 */
export async function requestDataLink(db: Db, w: Waitlist, sub: SubscriberRow, dispatch: Dispatch): Promise<void> {
  const at = now();
  const code = token(32);
  const out = email(nothing(), w, "data_export", sub.id, sql`NOT EXISTS (SELECT 1 FROM data_requests WHERE subscriber_id = ${sub.id} AND created_at > ${at - DATA_EMAIL_EVERY_MS} AND token <> ${code})`, code);
  await db.write([
    sql`INSERT INTO data_requests (token, subscriber_id, created_at, expires_at)
      SELECT ${code}, ${sub.id}, ${at}, ${at + DATA_LINK_MS}
      WHERE NOT EXISTS (SELECT 1 FROM data_requests WHERE subscriber_id = ${sub.id} AND created_at > ${at - DATA_EMAIL_EVERY_MS})`,
    ...out.statements,
  ]);
  dispatch(out.ids);
}

/** The subscriber a download link names while it works, with its waitlist; null otherwise. */
export async function findDataRequest(db: Db, code: string): Promise<{ sub: SubscriberRow; w: Waitlist } | null> {
  if (!/^[A-Za-z0-9]{16,64}$/.test(code)) return null;
  const [sub] = await selectSubscribers(db, sql`s.id = (SELECT subscriber_id FROM data_requests WHERE token = ${code} AND expires_at > ${now()})`);
  if (!sub) return null;
  const [w] = await db.select().from(db.t.waitlists).where(sql`id = ${sub.waitlist_id}`);
  return w ? { sub, w } : null;
}

export const pruneDataRequests = (db: Db, at = now()) => db.exec(sql`DELETE FROM data_requests WHERE expires_at < ${at}`);

/**
 * The daily job: rejected and joined subscribers whose last change is older than their waitlist's retention_days are
 * removed with what names them (as an erase), 200 at a time; their referrers keep the credit (it was earned), and a
 * subscriber.deleted webhook (erased) tells the team's systems. Answers how many were removed.
 */
export async function pruneRetention(db: Db, dispatch: Dispatch, at = now()): Promise<number> {
  const lists = await db.rows<{ id: string; retention_days: number }>(sql`SELECT id, retention_days FROM waitlists WHERE retention_days IS NOT NULL`);
  let removed = 0;
  for (const list of lists) {
    const [w] = await db.select().from(db.t.waitlists).where(sql`id = ${list.id}`);
    if (!w) continue;
    const before = at - Number(list.retention_days) * 86_400_000;
    for (;;) {
      const due = await db.rows<{ id: string; email: string }>(
        sql`SELECT id, email FROM subscribers WHERE waitlist_id = ${w.id} AND status = 'confirmed' AND access IN ('rejected', 'joined') AND updated_at < ${before} ORDER BY updated_at LIMIT 200`,
      );
      if (due.length === 0) break;
      const ids: string[] = [];
      await db.tx(async (tx) => {
        ids.length = 0;
        await tx.rows(lockLine(tx, w.id));
        for (const s of due) {
          const out = webhookEvent(nothing(), w, "subscriber.deleted", s.id, sql`${tx.d.prevChanged} = 1`, {
            payload: (id, createdAt) => JSON.stringify(envelope(id, "subscriber.deleted", createdAt, w, { subscriber: { id: s.id }, erased: true, reason: "retention" })),
          });
          await tx.write([
            sql`UPDATE subscribers SET referrer_id = NULL WHERE referrer_id = ${s.id}`,
            sql`DELETE FROM subscribers WHERE id = ${s.id} AND access IN ('rejected', 'joined') RETURNING id`,
            ...out.statements,
            forgetSubscriber(s.id, out.ids),
            sql`DELETE FROM confirmation_sends WHERE email = ${s.email}`,
          ]);
          ids.push(...out.ids);
        }
      });
      dispatch(ids);
      removed += due.length;
    }
  }
  return removed;
}
