// The broadcasts job (issue 45): starts scheduled broadcasts, queues the recipients of sending ones a batch at a time,
// and marks a broadcast sent once every email of it has settled.
//
// Each batch is one transaction: the next subscribers of the segment after the broadcast's cursor (by sign-up time,
// then id) get a recipient row (its primary key is (broadcast, subscriber): one email per person, whatever happens)
// and an outbox row, and the cursor moves past them. A crash loses no batch and repeats none; the outbox delivers
// the rows like any email, claimed with a lease, so a send cut short by a crash is taken up again within a minute.
//
// Throttling: each row is due at its own slot, MAIL_RATE_PER_MINUTE slots a minute, counted from a `mail_slot` kept
// in `meta` for every broadcast and instance together; the job queues at most 15 s ahead (of the clock, and of the
// emails still waiting), so a cancel stops almost everything, a slow SMTP server holds queueing back, and a sign-up's
// emails never wait behind a broadcast (they are sent at once, not by slot).
import { sql } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import type { SegmentInput } from "./model";
import { segmentWhere } from "./segment";

/** Recipients queued by one transaction: small enough that a sign-up never waits long for the write lock (~5 ms). */
export const BATCH = 100;
/** How far ahead emails are queued: three runs of the job, so the next run always finds work due. */
const AHEAD_MS = 15_000;
/** Between two batches the writer is left to sign-ups for a moment (bench/README.md, issue 45). */
const BREATHER_MS = 2;
const SLOT_KEY = "mail_slot";

interface Sending {
  id: string;
  waitlist_id: string;
  segment: string;
  cursor: string | null;
}

/** `joined_at:id` of the last subscriber queued, as the cursor keeps it. */
const parseCursor = (cursor: string | null) => {
  if (!cursor) return null;
  const at = cursor.indexOf(":");
  return { joinedAt: Number(cursor.slice(0, at)), id: cursor.slice(at + 1) };
};

/**
 * Queues the next batch of one broadcast: "queued" some, "done" when the segment is exhausted (the broadcast's
 * queued_at is then set), "full" when 15 s of emails are already queued, "gone" when it stopped sending.
 */
export async function queueBatch(db: Db, broadcastId: string, ratePerMinute: number, at = now()): Promise<"queued" | "done" | "full" | "gone"> {
  const interval = 60_000 / ratePerMinute;
  await db.exec(sql`INSERT INTO meta (key, value) VALUES (${SLOT_KEY}, '0') ON CONFLICT (key) DO NOTHING`);
  return db.tx(async (tx) => {
    const [b] = await tx.rows<Sending & { status: string }>(sql`SELECT id, waitlist_id, segment, cursor, status FROM broadcasts WHERE id = ${broadcastId}${tx.d.forUpdate}`);
    if (!b || b.status !== "sending") return "gone";
    const [slotRow] = await tx.rows<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${SLOT_KEY}${tx.d.forUpdate}`);
    const slot = Math.max(at, Number(slotRow?.value ?? 0));
    // ahead of the clock by AHEAD_MS at most, and of the emails actually sent: a slow SMTP server holds queueing back
    const [{ queued }] = await tx.rows<{ queued: number }>(sql`SELECT count(*) AS queued FROM broadcast_recipients WHERE broadcast_id = ${b.id} AND status = 'queued'`);
    const room = Math.min(Math.floor((at + AHEAD_MS - slot) / interval), Math.ceil(AHEAD_MS / interval) - Number(queued));
    if (room <= 0) return "full";
    const after = parseCursor(b.cursor);
    const where = await segmentWhere(tx, b.waitlist_id, JSON.parse(b.segment) as SegmentInput);
    const next = after ? sql`AND (s.joined_at > ${after.joinedAt} OR (s.joined_at = ${after.joinedAt} AND s.id > ${after.id}))` : sql``;
    const batch = await tx.rows<{ id: string; joined_at: number }>(
      sql`SELECT s.id, s.joined_at FROM subscribers s WHERE ${where} ${next} ORDER BY s.joined_at, s.id LIMIT ${Math.min(BATCH, room)}`,
    );
    if (batch.length === 0) {
      await tx.exec(sql`UPDATE broadcasts SET queued_at = ${at}, updated_at = ${at} WHERE id = ${b.id}`);
      return "done";
    }
    const rows = batch.map((s, i) => ({ subscriber: s.id, outbox: `evt_${sortableToken(24)}`, due: Math.round(slot + i * interval) }));
    const last = batch[batch.length - 1];
    await tx.exec(sql`INSERT INTO broadcast_recipients (broadcast_id, subscriber_id, outbox_id, status, updated_at)
      VALUES ${sql.join(rows.map((r) => sql`(${b.id}, ${r.subscriber}, ${r.outbox}, 'queued', ${at})`), sql`, `)}`);
    await tx.exec(sql`INSERT INTO outbox (id, kind, topic, waitlist_id, subscriber_id, related_id, payload, status, attempts, next_attempt_at, created_at)
      VALUES ${sql.join(rows.map((r) => sql`(${r.outbox}, 'email', 'broadcast', ${b.waitlist_id}, ${r.subscriber}, ${b.id}, NULL, 'pending', 0, ${r.due}, ${at})`), sql`, `)}`);
    await tx.exec(sql`UPDATE broadcasts SET cursor = ${`${Number(last.joined_at)}:${last.id}`}, updated_at = ${at} WHERE id = ${b.id}`);
    await tx.exec(sql`UPDATE meta SET value = ${String(Math.round(slot + rows.length * interval))} WHERE key = ${SLOT_KEY}`);
    return "queued";
  });
}

/** One run of the job, for at most `ms`. */
export async function runBroadcasts(db: Db, ratePerMinute: number, ms: number): Promise<void> {
  const end = now() + ms;
  const at = now();
  // an instance with nothing to send only reads (broadcasts_due_idx): no write on every tick
  const active = await db.rows<{ status: string; send_at: number | null }>(sql`SELECT status, send_at FROM broadcasts WHERE status IN ('scheduled', 'sending')`);
  if (active.length === 0) return;
  if (active.some((b) => b.status === "scheduled" && Number(b.send_at) <= at)) {
    await db.exec(sql`UPDATE broadcasts SET status = 'sending', started_at = ${at}, updated_at = ${at} WHERE status = 'scheduled' AND send_at <= ${at}`);
  }
  const sending = await db.rows<{ id: string }>(sql`SELECT id FROM broadcasts WHERE status = 'sending' AND queued_at IS NULL ORDER BY started_at, id`);
  for (const { id } of sending) {
    let outcome: string;
    do {
      outcome = await queueBatch(db, id, ratePerMinute);
      if (outcome === "queued") await Bun.sleep(BREATHER_MS);
    } while (outcome === "queued" && now() < end);
    if (outcome === "full") break;
  }
  const done = now();
  if (!active.some((b) => b.status === "sending")) return;
  await db.exec(sql`UPDATE broadcasts SET status = 'sent', finished_at = ${done}, updated_at = ${done}
    WHERE status = 'sending' AND queued_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM broadcast_recipients r WHERE r.broadcast_id = broadcasts.id AND r.status = 'queued')`);
}
