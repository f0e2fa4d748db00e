// Turns an outbox row into what is sent: a webhook envelope (DESIGN §4 Events) or an email, from the committed state.
import { eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { renderHtml, renderSubject, renderText, withUnsubscribeLink, type EmailLook, type TemplateValues } from "../email/templates";
import { inviteLink, selectSubscribers, subscriberView, thankYouUrl, unsubscribeUrl, type SubscriberRow } from "../subscribers/view";
import { storePayload, type OutboxRow } from "./store";
import { referralLink } from "../waitlists/links";
import { lockLine } from "../subscribers/lock";

export interface Email {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra headers (issue 16: List-Unsubscribe and List-Unsubscribe-Post, RFC 8058). */
  headers?: Record<string, string>;
}

export const confirmLink = (baseUrl: string, token: string) => `${baseUrl}/confirm/${token}`;

export function envelope(id: string, type: string, createdAt: number, w: Pick<Waitlist, "id" | "key" | "slug" | "name">, data: unknown) {
  return { id, type, created_at: createdAt, waitlist: { id: w.id, key: w.key, slug: w.slug, name: w.name }, data };
}

async function subscriber(db: Db, id: string | null): Promise<SubscriberRow | undefined> {
  if (!id) return undefined;
  return (await selectSubscribers(db, sql`s.id = ${id}`))[0];
}

export function templateValues(row: SubscriberRow, w: Waitlist, baseUrl: string): TemplateValues {
  const ranked = row.status === "confirmed" && row.position !== null;
  return {
    name: row.name,
    email: row.email,
    waitlist_name: w.name,
    ...(ranked
      ? {
          position: Number(row.position),
          inflated_position: Number(row.position) + w.positionOffset,
          points: Number(row.points),
          referral_count: Number(row.referral_count),
          referral_code: row.referral_code,
          referral_link: referralLink(w, row.referral_code, baseUrl),
          status_link: thankYouUrl(baseUrl, row.sign_up_token),
        }
      : {}),
    ...(row.confirm_token ? { confirm_link: confirmLink(baseUrl, row.confirm_token) } : {}),
    ...(row.invite_token && row.access === "invited" ? { invite_link: inviteLink(baseUrl, row.invite_token) } : {}),
  };
}

/** The look of a waitlist's emails (settings `email_template`). */
export const lookOf = (w: Waitlist): EmailLook => ({ name: w.emailSenderName ?? w.name, logoUrl: w.emailLogoUrl, color: w.emailColor, footer: w.emailFooter });

/**
 * An email from its templates: subject, text and HTML parts in the waitlist's look. With an unsubscribe link (every
 * email but the confirmation, issue 16), the body shows it (appended when the template does not) and the RFC 8058
 * headers carry it.
 */
export function composeEmail(w: Waitlist, to: string, subject: string, template: string, values: TemplateValues, unsubscribe: string | null): Email {
  const body = unsubscribe ? withUnsubscribeLink(template) : template;
  const look = lookOf(w);
  return {
    to,
    subject: renderSubject(subject, values),
    text: renderText(body, values, look),
    html: renderHtml(body, values, look),
    ...(unsubscribe ? { headers: { "List-Unsubscribe": `<${unsubscribe}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } } : {}),
  };
}

/** A broadcast's subject and body (undefined when it is gone). */
async function broadcastText(db: Db, id: string | null) {
  if (!id) return undefined;
  const [b] = await db.rows<{ subject: string; body_markdown: string }>(sql`SELECT subject, body_markdown FROM broadcasts WHERE id = ${id}`);
  return b ? ([b.subject, b.body_markdown] as const) : undefined;
}

/** Issue 47: the email with a subscriber's data link, ours (not one of the team's templates). */
const DATA_EMAIL = [
  "Your data from the {{waitlist_name}} waitlist",
  "Hi {{first_name}},\n\nyou asked for a copy of everything the {{waitlist_name}} waitlist holds about you. Download it here (the link works for 24 hours):\n\n{{data_link}}\n\nIf you did not ask for it, you can ignore this email: nothing is sent anywhere else.",
] as const;

/** The payload to send, or null when what it describes is gone (deleted before it was rendered). */
export async function renderPayload(db: Db, row: OutboxRow, baseUrl: string): Promise<string | null> {
  if (row.payload !== null) return row.payload;
  const { waitlists } = db.t;
  const [w] = await db.select().from(waitlists).where(eq(waitlists.id, row.waitlist_id));
  if (!w) return null;
  const sub = await subscriber(db, row.subscriber_id);
  if (!sub) return null;
  const milestone = row.topic === "milestone" || row.topic === "milestone.reached" ? await reward(db, sub.id, Number(row.related_id)) : null;
  if (milestone === undefined) return null;
  if (row.kind === "email") {
    // issue 16: every email but the double opt-in confirmation can be stopped in one click (issue 47: and the data
    // link a subscriber asked for)
    const unsubscribable = row.topic !== "confirmation" && row.topic !== "data_export";
    const unsubscribe = unsubscribeUrl(baseUrl, sub.sign_up_token);
    const values = {
      ...templateValues(sub, w, baseUrl),
      ...(milestone ? { reward: milestone.reward } : {}),
      ...(unsubscribable ? { unsubscribe_link: unsubscribe } : {}),
      ...(row.topic === "data_export" ? { data_link: `${baseUrl}/d/${row.related_id}` } : {}),
    };
    const broadcast = row.topic === "broadcast" ? await broadcastText(db, row.related_id) : null;
    if (broadcast === undefined) return null;
    const [subject, template] = broadcast
      ? broadcast
      : row.topic === "data_export"
        ? DATA_EMAIL
        : row.topic === "confirmation"
        ? [w.confirmationSubject, w.confirmationBody]
        : row.topic === "milestone"
          ? [w.milestoneSubject, w.milestoneBody]
          : row.topic === "invitation"
            ? [w.invitationSubject, w.invitationBody]
            : [w.welcomeSubject, w.welcomeBody];
    const email = composeEmail(w, sub.email, subject, template, values, unsubscribable ? unsubscribe : null);
    return JSON.stringify(email);
  }
  if (row.topic === "referral.credited") {
    const referrer = await subscriber(db, row.related_id);
    if (!referrer) return null;
    return JSON.stringify(envelope(row.event_id ?? row.id, row.topic, row.created_at, w, { referrer: subscriberView(referrer, w, baseUrl), referee: subscriberView(sub, w, baseUrl) }));
  }
  return JSON.stringify(envelope(row.event_id ?? row.id, row.topic, row.created_at, w, { subscriber: subscriberView(sub, w, baseUrl), ...(milestone ? { milestone } : {}) }));
}

/** The reward a milestone row recorded (undefined when it is gone). */
async function reward(db: Db, subscriberId: string, referrals: number) {
  const [m] = await db.rows<{ referrals: number; reward: string; tag: string | null; reached_at: number }>(
    sql`SELECT referrals, reward, tag, reached_at FROM milestone_rewards WHERE subscriber_id = ${subscriberId} AND referrals = ${referrals}`,
  );
  return m ? { referrals: Number(m.referrals), reward: m.reward, tag: m.tag, reached_at: Number(m.reached_at) } : undefined;
}

/**
 * Renders now the webhooks about a subscriber that is about to be deleted and whose payload is still unrendered
 * (an event is rendered at its first delivery attempt; a skipped one when a replay sends it): they then go out with the subscriber as it was, instead
 * of failing because it is gone. Emails are left alone: a deleted subscriber gets none.
 */
export async function freezePayloads(db: Db, subscriberId: string, baseUrl: string): Promise<void> {
  await renderNow(db, baseUrl, sql`status IN ('pending', 'skipped') AND kind = 'webhook' AND payload IS NULL
    AND (subscriber_id = ${subscriberId} OR related_id = ${subscriberId})`);
}

async function renderNow(db: Db, baseUrl: string, where: SQL) {
  for (const row of await db.rows<OutboxRow>(sql`SELECT * FROM outbox WHERE ${where}`)) {
    const payload = await renderPayload(db, row, baseUrl);
    if (payload !== null) await storePayload(db, row.id, payload);
  }
}

/**
 * A change to one subscriber that writes a webhook event about them. With endpoints, it runs in a transaction under
 * the line's lock, after the subscriber's still unrendered webhooks are rendered as the subscriber is before it: an
 * event waiting behind an earlier one of theirs (a slow receiver, issue 49) carries its own change, not this one's,
 * however soon this one follows it. Without endpoints there is nothing to render and it is the plain write.
 */
export async function writeAbout(db: Db, w: Pick<Waitlist, "id" | "webhookEndpoints">, subscriberId: string, baseUrl: string, statements: SQL[]) {
  if (!w.webhookEndpoints) return db.write(statements);
  return db.tx(async (tx) => {
    await tx.rows(lockLine(tx, w.id));
    // the subscriber's own events, through each endpoint's index of them (outbox_endpoint_idx)
    await renderNow(tx, baseUrl, sql`kind = 'webhook' AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE waitlist_id = ${w.id})
      AND subscriber_id = ${subscriberId} AND status = 'pending' AND payload IS NULL`);
    return tx.write(statements);
  });
}
