// Changing subscribers: PUT (merge, re-rank at once), DELETE (compact positions, take referral credit back),
// and what a subscriber does from a link (issue 16): unsubscribe, and leave the waitlist.
import { eq, sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";
import { foldNameOrNull } from "../db/fold";
import { lockLine } from "./lock";
import type { Waitlist } from "../http/api";
import { AppError, badRequest, notFound } from "../http/errors";
import { checkCustomFields } from "./metadata";
import type { UpdateInput } from "./model";
import { findSubscriber } from "./query";
import { selectSubscribers, subscriberView, thankYouUrl, type SubscriberRow } from "./view";
import { nothing, webhookEvent, type Dispatch } from "../outbox/events";
import { envelope, freezePayloads, writeAbout } from "../outbox/render";
import { forgetSubscriber } from "../outbox/store";

const clean = (v: string | null) => (v?.trim() ? v.trim() : null);

export async function updateSubscriber(db: Db, waitlist: Waitlist, idOrEmail: string, input: UpdateInput, baseUrl: string, dispatch: Dispatch) {
  if (!input || Object.keys(input).length === 0) throw badRequest("Provide at least one field to update: name, phone, points or metadata");
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await findSubscriber(db, waitlist.id, idOrEmail);
    const pending = row.seq === null;
    if (input.points !== undefined && pending) throw new AppError("conflict", "Points can be set once the subscriber has confirmed their email");
    let metadata = row.metadata;
    if (input.metadata !== undefined) {
      // spec: merged into existing metadata; a null value removes the key
      const merged: Record<string, unknown> = JSON.parse(row.metadata);
      for (const [k, v] of Object.entries(input.metadata)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      metadata = checkCustomFields(merged);
    }
    const at = now();
    const set = sql`updated_at = ${at}, metadata = ${metadata}
      ${input.name !== undefined ? sql`, name = ${clean(input.name)}, name_key = ${foldNameOrNull(clean(input.name))}` : sql``}
      ${input.phone !== undefined ? sql`, phone = ${clean(input.phone)}` : sql``}
      ${input.points !== undefined ? sql`, points = ${input.points}` : sql``}`;
    // the metadata read above guards the write: a concurrent merge makes this one re-read and retry
    const guard = sql`id = ${row.id} AND metadata = ${row.metadata}`;
    // prevChanged chains the statements after the UPDATE to it having taken effect (an outbox insert adds exactly one row)
    const out = webhookEvent(nothing(), waitlist, "subscriber.updated", row.id, sql`${db.d.prevChanged} = 1`);
    const results = await writeAbout(db, waitlist, row.id, baseUrl, [
      lockLine(db, waitlist.id),
      sql`UPDATE subscribers SET ${set} WHERE ${guard} RETURNING id`,
      ...out.statements,
      sql`SELECT name, phone, points, metadata FROM subscribers WHERE id = ${row.id}`,
    ]);
    if (results[1].length === 0) continue;
    dispatch(out.ids);
    const updated = results[results.length - 1][0] as { name: string | null; phone: string | null; points: number; metadata: string };
    return {
      id: row.id,
      email: row.email,
      name: updated.name,
      phone: updated.phone,
      ...(pending ? {} : { points: Number(updated.points), sign_up_token: row.sign_up_token, thank_you_url: thankYouUrl(baseUrl, row.sign_up_token) }),
      updated_at: at,
      metadata: JSON.parse(updated.metadata) as Record<string, unknown>,
    };
  }
  throw new AppError("conflict", "The subscriber is being changed by another request; try again");
}

/**
 * Deletes in one transaction: the referrer loses this referral's points and one referral_count,
 * the subscriber leaves the rank counters and the total, and positions behind it close up at once.
 */
export async function deleteSubscriber(db: Db, waitlist: Waitlist, idOrEmail: string, baseUrl: string, dispatch: Dispatch, opts: { erase?: boolean } = {}) {
  const row = await findSubscriber(db, waitlist.id, idOrEmail);
  // the event carries the subscriber as it was, so its payload is fixed now; erased, only who it was (issue 47)
  const data = opts.erase ? { subscriber: { id: row.id }, erased: true } : { subscriber: subscriberView(row, waitlist, baseUrl) };
  const out = webhookEvent(nothing(), waitlist, "subscriber.deleted", row.id, sql`${db.d.prevChanged} = 1`, {
    payload: (id, createdAt) => JSON.stringify(envelope(id, "subscriber.deleted", createdAt, waitlist, data)),
  });
  // issue 47: erased, nothing that names them stays: their emails and events (sent or not) and the confirmation caps' record
  const erase = opts.erase
    ? [
        forgetSubscriber(row.id, out.ids),
        sql`DELETE FROM confirmation_sends WHERE email = ${row.email}`,
      ]
    : [];
  const credit = sql`(SELECT referrer_id FROM referrals WHERE referee_id = ${row.id} AND credited = TRUE)`;
  const results = await db.tx(async (tx) => {
    // under the line's lock no write that enqueues an event about this subscriber is between commit and
    // this read: its unrendered webhooks are rendered with it as it is, before it is gone
    await tx.rows(lockLine(tx, waitlist.id));
    await freezePayloads(tx, row.id, baseUrl);
    return tx.write([
      sql`UPDATE subscribers SET points = points - (SELECT points FROM referrals WHERE referee_id = ${row.id}),
        referral_count = referral_count - 1, updated_at = ${now()} WHERE id = ${credit}`,
      sql`UPDATE subscribers SET referrer_id = NULL WHERE referrer_id = ${row.id}`,
      sql`DELETE FROM subscribers WHERE id = ${row.id} RETURNING id`,
      ...out.statements,
      ...erase,
    ]);
  });
  if (results[2].length === 0) throw notFound("Subscriber not found");
  dispatch(out.ids);
  return { success: true, message: "Subscriber deleted" };
}

/** The subscriber a status or unsubscribe link names (its sign-up token), with its waitlist; null for an unknown link. */
export async function findBySignUpToken(db: Db, signUpToken: string): Promise<{ sub: SubscriberRow; w: Waitlist } | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(signUpToken)) return null;
  const [sub] = await selectSubscribers(db, sql`s.sign_up_token = ${signUpToken}`);
  if (!sub) return null;
  const { waitlists } = db.t;
  const [w] = await db.select().from(waitlists).where(eq(waitlists.id, sub.waitlist_id));
  return w ? { sub, w } : null;
}

/**
 * Issue 16: no email of any kind goes to this subscriber afterwards (the dispatcher checks before
 * each send); the place in line is kept. Once: a repeat keeps the first time and sends no second
 * `subscriber.unsubscribed` webhook. Returns when the subscriber unsubscribed.
 */
export async function unsubscribe(db: Db, w: Waitlist, sub: SubscriberRow, dispatch: Dispatch): Promise<number> {
  if (sub.unsubscribed_at !== null) return Number(sub.unsubscribed_at);
  const at = now();
  const out = webhookEvent(nothing(), w, "subscriber.unsubscribed", sub.id, sql`${db.d.prevChanged} = 1`);
  const [updated] = await db.write([
    sql`UPDATE subscribers SET unsubscribed_at = ${at}, updated_at = ${at} WHERE id = ${sub.id} AND unsubscribed_at IS NULL RETURNING id`,
    ...out.statements,
  ]);
  if (updated.length > 0) {
    dispatch(out.ids);
    return at;
  }
  // of two posts at once, the other one unsubscribed first
  const [again] = await db.rows<{ unsubscribed_at: number | null }>(sql`SELECT unsubscribed_at FROM subscribers WHERE id = ${sub.id}`);
  return Number(again?.unsubscribed_at ?? at);
}
