// Broadcasts (issue 45): drafts the team writes to a segment of its list, previewed, test-sent, then sent or scheduled.
// Sending itself is the broadcasts job's (sender.ts): it queues the recipients a batch at a time.
import { sql } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import { unknownMergeTags, type TemplateValues } from "../email/templates";
import type { Waitlist } from "../http/api";
import { badRequest, conflict, notFound } from "../http/errors";
import { enqueue } from "../outbox/store";
import type { Dispatch } from "../outbox/events";
import { composeEmail, templateValues } from "../outbox/render";
import { normalizeEmail } from "../subscribers/email";
import { selectSubscribers, unsubscribeUrl } from "../subscribers/view";
import { referralLink } from "../waitlists/links";
import type { SegmentInput } from "./model";
import { checkSegment, segmentWhere } from "./segment";

interface BroadcastRow {
  id: string;
  waitlist_id: string;
  subject: string;
  body_markdown: string;
  segment: string;
  status: "draft" | "scheduled" | "sending" | "sent" | "cancelled";
  send_at: number | null;
  cursor: string | null;
  queued_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  cancelled_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The most a list answers: the newest first. */
const LIST_MAX = 100;
const YEAR_MS = 365 * 86_400_000;
const num = (v: number | null) => (v === null ? null : Number(v));

function checkMergeTags(input: { subject?: string; body_markdown?: string }) {
  for (const [field, text] of [["subject", input.subject], ["body_markdown", input.body_markdown]] as const) {
    if (text === undefined) continue;
    const unknown = unknownMergeTags(text);
    if (unknown.length) throw badRequest(`${field}: unknown merge tag ${unknown.map((u) => `{{${u}}}`).join(", ")}; known: {{first_name}}, {{position}}, {{referral_link}}, {{status_link}}, {{unsubscribe_link}} and the others the document lists`);
  }
}

async function view(db: Db, b: BroadcastRow) {
  let counts: Record<string, number> = {};
  let recipients: number;
  let unsubscribed = 0;
  if (b.status === "draft" || (b.status === "scheduled" && b.cursor === null) || (b.status === "cancelled" && b.started_at === null)) {
    recipients = b.status === "cancelled" ? 0 : await countSegment(db, b.waitlist_id, JSON.parse(b.segment));
  } else {
    const rows = await db.rows<{ status: string; n: number }>(sql`SELECT status, count(*) AS n FROM broadcast_recipients WHERE broadcast_id = ${b.id} GROUP BY status`);
    counts = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    recipients = rows.reduce((sum, r) => sum + Number(r.n), 0);
    const [u] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM broadcast_recipients r JOIN subscribers s ON s.id = r.subscriber_id
      WHERE r.broadcast_id = ${b.id} AND s.unsubscribed_at >= ${b.started_at ?? 0}`);
    unsubscribed = Number(u.n);
  }
  return {
    id: b.id,
    subject: b.subject,
    body_markdown: b.body_markdown,
    segment: JSON.parse(b.segment) as SegmentInput,
    status: b.status,
    send_at: num(b.send_at),
    recipients,
    sent: counts.sent ?? 0,
    failed: counts.failed ?? 0,
    bounced: counts.bounced ?? 0,
    skipped: counts.skipped ?? 0,
    unsubscribed,
    created_at: Number(b.created_at),
    updated_at: Number(b.updated_at),
    started_at: num(b.started_at),
    finished_at: num(b.finished_at),
    cancelled_at: num(b.cancelled_at),
  };
}

async function countSegment(db: Db, waitlistId: string, segment: SegmentInput): Promise<number> {
  const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM subscribers s WHERE ${await segmentWhere(db, waitlistId, segment)}`);
  return Number(n);
}

async function find(db: Db, w: Waitlist, id: string): Promise<BroadcastRow> {
  const [b] = await db.rows<BroadcastRow>(sql`SELECT * FROM broadcasts WHERE id = ${id} AND waitlist_id = ${w.id}`);
  if (!b) throw notFound("Broadcast not found");
  return b;
}

export async function createBroadcast(db: Db, w: Waitlist, input: { subject: string; body_markdown: string; segment?: SegmentInput }) {
  checkMergeTags(input);
  const segment = input.segment ?? {};
  await checkSegment(db, w.id, segment);
  const at = now();
  const id = `bc_${sortableToken(20)}`;
  const [[row]] = await db.write([
    sql`INSERT INTO broadcasts (id, waitlist_id, subject, body_markdown, segment, status, created_at, updated_at)
      VALUES (${id}, ${w.id}, ${input.subject.trim()}, ${input.body_markdown}, ${JSON.stringify(segment)}, 'draft', ${at}, ${at}) RETURNING *`,
  ]);
  return view(db, row as unknown as BroadcastRow);
}

export async function listBroadcasts(db: Db, w: Waitlist) {
  const rows = await db.rows<BroadcastRow>(sql`SELECT * FROM broadcasts WHERE waitlist_id = ${w.id} ORDER BY created_at DESC, id DESC LIMIT ${LIST_MAX}`);
  return Promise.all(rows.map((b) => view(db, b)));
}

export const getBroadcast = async (db: Db, w: Waitlist, id: string) => view(db, await find(db, w, id));

/** A draft's fields; once scheduled or sent it is what was sent, and is a 409. */
export async function updateBroadcast(db: Db, w: Waitlist, id: string, patch: { subject?: string; body_markdown?: string; segment?: SegmentInput }) {
  const b = await find(db, w, id);
  checkMergeTags(patch);
  if (patch.segment) await checkSegment(db, w.id, patch.segment);
  const [[row]] = await db.write([
    sql`UPDATE broadcasts SET subject = ${patch.subject?.trim() ?? b.subject}, body_markdown = ${patch.body_markdown ?? b.body_markdown},
      segment = ${patch.segment ? JSON.stringify(patch.segment) : b.segment}, updated_at = ${now()}
      WHERE id = ${id} AND status = 'draft' RETURNING *`,
  ]);
  if (!row) throw conflict(`Only a draft can be changed; this broadcast is ${b.status}`);
  return view(db, row as unknown as BroadcastRow);
}

export async function deleteBroadcast(db: Db, w: Waitlist, id: string) {
  const b = await find(db, w, id);
  const changed = await db.exec(sql`DELETE FROM broadcasts WHERE id = ${id} AND status IN ('draft', 'sent', 'cancelled')`);
  if (changed.changed === 0) throw conflict(`A ${b.status} broadcast cannot be deleted: cancel it first`);
  return { success: true, message: "Broadcast deleted" };
}

/** Made-up values for a test copy or an empty segment's sample: a test copy must not carry a real subscriber's links. */
function exampleValues(w: Waitlist, baseUrl: string): TemplateValues {
  return {
    name: "Ada Lovelace",
    email: "ada@example.com",
    waitlist_name: w.name,
    position: 42,
    inflated_position: 42 + w.positionOffset,
    points: 80,
    referral_count: 1,
    referral_code: "EXAMPLE",
    referral_link: referralLink(w, "EXAMPLE", baseUrl),
    status_link: `${baseUrl}/t/example`,
    unsubscribe_link: `${baseUrl}/u/example`,
  };
}

export async function previewBroadcast(db: Db, w: Waitlist, id: string, baseUrl: string) {
  const b = await find(db, w, id);
  const where = await segmentWhere(db, w.id, JSON.parse(b.segment));
  const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM subscribers s WHERE ${where}`);
  const [first] = Number(n) > 0 ? await selectSubscribers(db, sql`${where} ORDER BY s.joined_at, s.id LIMIT 1`) : [];
  const values = first ? { ...templateValues(first, w, baseUrl), unsubscribe_link: unsubscribeUrl(baseUrl, first.sign_up_token) } : exampleValues(w, baseUrl);
  const email = composeEmail(w, first?.email ?? "ada@example.com", b.subject, b.body_markdown, values, values.unsubscribe_link!);
  return { recipients: Number(n), sample: { subject: email.subject, text: email.text, html: email.html } };
}

/** A copy to the team's own address, with example values, through the outbox like every email. */
export async function testBroadcast(db: Db, w: Waitlist, id: string, to: string, baseUrl: string, dispatch: Dispatch) {
  const b = await find(db, w, id);
  const values = exampleValues(w, baseUrl);
  const { headers: _, ...email } = composeEmail(w, normalizeEmail(to), `[Test] ${b.subject}`, b.body_markdown, values, values.unsubscribe_link!);
  const e = enqueue({ kind: "email", topic: "broadcast_test", waitlistId: w.id, subscriberId: null, relatedId: b.id, payload: () => JSON.stringify(email) });
  await db.write([e.statement]);
  dispatch([e.id]);
  return { success: true, message: `A test copy is on its way to ${email.to}` };
}

/** Sends now, or at `send_at`: a draft (or a scheduled one, rescheduled). The broadcasts job does the sending. */
export async function sendBroadcast(db: Db, w: Waitlist, id: string, sendAt: number | undefined) {
  const b = await find(db, w, id);
  const at = now();
  if (sendAt !== undefined && sendAt > at + YEAR_MS) throw badRequest("send_at must be within a year from now");
  const later = sendAt !== undefined && sendAt > at;
  const [[row]] = await db.write([
    later
      ? sql`UPDATE broadcasts SET status = 'scheduled', send_at = ${sendAt}, updated_at = ${at} WHERE id = ${id} AND status IN ('draft', 'scheduled') RETURNING *`
      : sql`UPDATE broadcasts SET status = 'sending', send_at = ${at}, started_at = ${at}, updated_at = ${at} WHERE id = ${id} AND status IN ('draft', 'scheduled') RETURNING *`,
  ]);
  if (!row) throw conflict(`Only a draft or a scheduled broadcast can be sent; this one is ${b.status}`);
  return view(db, row as unknown as BroadcastRow);
}

/**
 * Stops what has not left: a scheduled broadcast never starts, a sending one queues no more, and its queued emails
 * not yet claimed by a sender are given up. An email being handed to the SMTP server right now still goes.
 */
export async function cancelBroadcast(db: Db, w: Waitlist, id: string) {
  const b = await find(db, w, id);
  const at = now();
  const waiting = sql`SELECT id FROM outbox WHERE topic = 'broadcast' AND related_id = ${id} AND status = 'pending' AND (locked_until IS NULL OR locked_until < ${at})`;
  const [[row]] = await db.write([
    sql`UPDATE broadcasts SET status = 'cancelled', cancelled_at = ${at}, updated_at = ${at} WHERE id = ${id} AND status IN ('draft', 'scheduled', 'sending') RETURNING *`,
    sql`UPDATE broadcast_recipients SET status = 'skipped', updated_at = ${at} WHERE broadcast_id = ${id} AND status = 'queued' AND outbox_id IN (${waiting})`,
    sql`UPDATE outbox SET status = 'failed', last_error = 'not sent: the broadcast was cancelled' WHERE id IN (${waiting})`,
  ]);
  if (!row) throw conflict(`Only a draft, scheduled or sending broadcast can be cancelled; this one is ${b.status}`);
  return view(db, row as unknown as BroadcastRow);
}
