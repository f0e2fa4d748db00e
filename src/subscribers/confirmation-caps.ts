// The form is not a mail relay (issue 16, DESIGN §10): confirmation emails to one address are capped, and
// the cap is decided and recorded in the same write transaction as the change that sends the email.
import { sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";
import type { Dialect } from "../db/dialect";
import type { Waitlist } from "../http/api";
import { enqueue } from "../outbox/store";
import { nothing, type Dispatch, type Outgoing } from "../outbox/events";
import { isValidEmailSyntax, normalizeEmail } from "./email";
import { badRequest } from "../http/errors";

/** One confirmation email per address and waitlist per 10 minutes... */
export const PER_WAITLIST_WINDOW_MS = 10 * 60_000;
/** ...and three per address a day across the instance. */
export const DAILY_CAP = 3;
export const DAY_MS = 86_400_000;

/** The pending subscriber with this email on this waitlist (new in this transaction, or there already). */
const pendingId = (waitlistId: string, email: string) =>
  sql`(SELECT id FROM subscribers WHERE waitlist_id = ${waitlistId} AND email = ${email} AND status = 'pending')`;

/** True while the caps allow one more confirmation email to `email` for `waitlistId`. */
const underCaps = (waitlistId: string, email: string, at: number) => sql`NOT EXISTS (SELECT 1 FROM confirmation_sends
    WHERE email = ${email} AND waitlist_id = ${waitlistId} AND sent_at > ${at - PER_WAITLIST_WINDOW_MS})
  AND (SELECT count(*) FROM confirmation_sends WHERE email = ${email} AND sent_at > ${at - DAY_MS}) < ${DAILY_CAP}`;

/**
 * The statements that queue a confirmation email to the pending subscriber `email` (if there is one and
 * the caps allow) and record the send. Run them inside the change's write transaction: SQLite's write
 * lock, or on PostgreSQL a lock on the address taken first, then serializes the decision across instances,
 * so two sign-ups at once cannot both send.
 * The send is recorded only if the outbox row was written (its id is unique to this call).
 */
export function cappedConfirmation(d: Dialect, out: Outgoing, w: Pick<Waitlist, "id">, email: string, at: number): Outgoing {
  // PostgreSQL: writers deciding for this address (on any waitlist) take turns, as SQLite's write lock makes them
  out.statements.push(d.lockKey(`confirmation:${email}`));
  const queued = enqueue(
    { kind: "email", topic: "confirmation", waitlistId: w.id, subscriberId: pendingId(w.id, email) },
    sql`EXISTS ${pendingId(w.id, email)} AND ${underCaps(w.id, email, at)}`,
    at,
  );
  out.ids.push(queued.id);
  out.statements.push(queued.statement);
  const record = sql`INSERT INTO confirmation_sends (email, waitlist_id, sent_at)
    SELECT ${email}, ${w.id}, ${at} WHERE EXISTS (SELECT 1 FROM outbox WHERE id = ${queued.id})`;
  out.statements.push(record);
  return out;
}

/**
 * The confirm-pending page's "send it again" (issue 16): the same caps as sign-up. The caller answers
 * the same whatever happened here (unknown address, confirmed, capped or sent): no oracle.
 */
export async function resendConfirmation(db: Db, w: Pick<Waitlist, "id">, rawEmail: string, dispatch: Dispatch): Promise<void> {
  const email = normalizeEmail(rawEmail);
  if (!email) throw badRequest("email is required");
  if (email.length > 254 || !isValidEmailSyntax(email)) throw badRequest("email must be a valid email address");
  const out = cappedConfirmation(db.d, nothing(), w, email, now());
  await db.write(out.statements);
  dispatch(out.ids);
}

/** Sends older than a day no longer count toward any cap; cron removes them. */
export const pruneConfirmationSends = (db: Db, at = now()) => db.exec(sql`DELETE FROM confirmation_sends WHERE sent_at < ${at - DAY_MS}`);
