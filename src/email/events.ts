// Issue 45: bounce and complaint reports, in our own bulk form or as a provider's webhook sends them (Amazon SES over
// SNS, Postmark). Every report is read and checked first; only then is any address marked (email/address-status.ts).
import { sql } from "drizzle-orm";
import type { Db } from "../db/db";
import { badRequest, notFound } from "../http/errors";
import type { Dispatch } from "../outbox/events";
import { normalizeEmail } from "../subscribers/email";
import { markAddress } from "./address-status";

export const EVENT_KINDS = ["hard_bounce", "soft_bounce", "complaint"] as const;
export interface EmailEvent {
  email: string;
  type: (typeof EVENT_KINDS)[number];
  /** A waitlist key or id of the account; without it, every waitlist of the account with that address. */
  waitlist?: string;
}

export const EVENTS_MAX = 1_000;

/** SNS confirms a subscription by a GET of SubscribeURL, which must be Amazon's own (never a URL of the sender's choosing). */
export const SNS_SUBSCRIBE_URL = String.raw`^https://sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/\S*$`;

export type Report =
  | { kind: "events"; events: EmailEvent[] }
  | { kind: "subscription"; subscribeUrl: string }
  | { kind: "ignored"; what: string };

const field = (value: unknown, name: string): string => {
  if (typeof value !== "string" || !value.trim()) throw badRequest(`${name} must be a non-blank string`);
  return value;
};

/** The addresses of a provider's recipient list that are addresses at all (a provider's body is read leniently). */
const addresses = (list: unknown): string[] =>
  (Array.isArray(list) ? list : []).flatMap((r: any) => (typeof r?.emailAddress === "string" && r.emailAddress.includes("@") ? [r.emailAddress] : []));

const reports = (emails: string[], type: EmailEvent["type"], what: string): Report =>
  emails.length ? { kind: "events", events: emails.map((email) => ({ email, type })) } : { kind: "ignored", what };

/** An SES notification (`notificationType`, or `eventType` from a configuration set's event destination). */
function fromSes(message: Record<string, any>): Report {
  const type = message.notificationType ?? message.eventType;
  if (type === "Bounce") return reports(addresses(message.bounce?.bouncedRecipients), message.bounce?.bounceType === "Permanent" ? "hard_bounce" : "soft_bounce", "an SES bounce without recipients");
  if (type === "Complaint") return reports(addresses(message.complaint?.complainedRecipients), "complaint", "an SES complaint without recipients");
  return { kind: "ignored", what: `SES ${String(type)} notification` };
}

/** Postmark bounce types that mean the address will never take mail. */
const POSTMARK_HARD = new Set(["HardBounce", "BadEmailAddress", "ManuallyDeactivated", "Blocked"]);

/**
 * Reads a request body (valid by the route's schema) into the reports it holds. Our own form is checked strictly by
 * the schema; a provider's body is read leniently: what is not a bounce or complaint report is answered as ignored.
 */
export function parseReport(body: Record<string, any>): Report {
  if (Array.isArray(body.events)) return { kind: "events", events: body.events as EmailEvent[] };
  if (body.Type === "SubscriptionConfirmation") return { kind: "subscription", subscribeUrl: String(body.SubscribeURL) };
  if (body.Type === "Notification") {
    let message: unknown = null;
    try {
      message = JSON.parse(String(body.Message ?? ""));
    } catch {}
    return message !== null && typeof message === "object" ? fromSes(message as Record<string, any>) : { kind: "ignored", what: "an SNS notification that is not from SES" };
  }
  if (typeof body.Type === "string" && typeof body.TopicArn === "string") return { kind: "ignored", what: `SNS ${body.Type} message` };
  const email = typeof body.Email === "string" && body.Email.includes("@") ? [body.Email] : [];
  if (body.RecordType === "Bounce") return reports(email, POSTMARK_HARD.has(body.Type) ? "hard_bounce" : "soft_bounce", "a Postmark bounce without Email");
  if (body.RecordType === "SpamComplaint") return reports(email, "complaint", "a Postmark complaint without Email");
  return { kind: "ignored", what: `${String(body.RecordType ?? body.Type)} record` };
}

export interface Applied {
  received: number;
  bounced: number;
  complained: number;
  soft_bounces: number;
  /** Reports whose address is no subscriber of the account (or of the waitlist named). */
  unknown: number;
}

/** Marks the addresses the reports name, in every waitlist of the account (or the one named). */
export async function applyEvents(db: Db, accountId: string, events: EmailEvent[], dispatch: Dispatch): Promise<Applied> {
  if (events.length > EVENTS_MAX) throw badRequest(`events must hold at most ${EVENTS_MAX} reports`);
  const named = [...new Set(events.flatMap((e) => (e.waitlist ? [e.waitlist.trim()] : [])))];
  const waitlists = named.length
    ? await db.rows<{ id: string; key: string }>(sql`SELECT id, key FROM waitlists WHERE account_id = ${accountId} AND (key IN ${named} OR id IN ${named})`)
    : [];
  const checked = events.map((e, i) => {
    const email = field(e.email, `events[${i}].email`);
    if (!(EVENT_KINDS as readonly string[]).includes(e.type)) throw badRequest(`events[${i}].type must be one of ${EVENT_KINDS.join(", ")}`);
    const w = e.waitlist ? waitlists.find((x) => x.key === e.waitlist!.trim() || x.id === e.waitlist!.trim()) : undefined;
    if (e.waitlist && !w) throw notFound(`Waitlist "${e.waitlist}" not found (events[${i}].waitlist): this account has no such waitlist`);
    return { email: normalizeEmail(email), type: e.type, waitlistId: w?.id };
  });
  const applied: Applied = { received: events.length, bounced: 0, complained: 0, soft_bounces: 0, unknown: 0 };
  for (const e of checked) {
    const subscribers = await db.rows<{ id: string; waitlist_id: string; webhook_endpoints: number }>(sql`
      SELECT s.id, s.waitlist_id, w.webhook_endpoints FROM subscribers s JOIN waitlists w ON w.id = s.waitlist_id
      WHERE w.account_id = ${accountId} AND s.email = ${e.email} ${e.waitlistId ? sql`AND w.id = ${e.waitlistId}` : sql``}`);
    if (subscribers.length === 0) applied.unknown++;
    if (e.type === "soft_bounce") {
      // a temporary failure: the address keeps getting email (the outbox retries what failed)
      applied.soft_bounces++;
      continue;
    }
    const status = e.type === "hard_bounce" ? "bounced" : "complained";
    for (const s of subscribers) {
      const w = { id: s.waitlist_id, webhookEndpoints: Number(s.webhook_endpoints) };
      if (await markAddress(db, w, s.id, status, dispatch)) applied[status]++;
    }
  }
  return applied;
}
