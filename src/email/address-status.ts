// Issue 45: an address that bounced (a permanent failure) or complained (marked a message as spam) gets no more email.
// Set by the SMTP server's 5xx (outbox/dispatcher.ts) and by providers' reports (email/events.ts), with its webhook.
import { sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { nothing, webhookEvent, type Dispatch } from "../outbox/events";

export type AddressStatus = "bounced" | "complained";

/** A complaint outranks a bounce: a bounced address that then complains is complained; never the other way. */
const FROM: Record<AddressStatus, string[]> = { bounced: ["ok"], complained: ["ok", "bounced"] };

/** Marks one subscriber's address; true when it changed (its webhook then goes out). */
export async function markAddress(
  db: Db,
  w: Pick<Waitlist, "id" | "webhookEndpoints">,
  subscriberId: string,
  status: AddressStatus,
  dispatch: Dispatch,
): Promise<boolean> {
  const at = now();
  const out = webhookEvent(nothing(), w, status === "bounced" ? "subscriber.bounced" : "subscriber.complained", subscriberId, sql`${db.d.prevChanged} = 1`);
  const [updated] = await db.write([
    sql`UPDATE subscribers SET email_status = ${status}, updated_at = ${at} WHERE id = ${subscriberId} AND email_status IN ${FROM[status]} RETURNING id`,
    ...out.statements,
  ]);
  if (updated.length === 0) return false;
  dispatch(out.ids);
  return true;
}
