// Issue 49: an endpoint's delivery log (every attempt, and every event skipped while it was disabled, kept 30 days),
// and sending its events again: one delivery's event (retry), or every event since a time that is not delivered
// (replay).
import { sql, type SQL } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import type { WEBHOOK_DELIVERY_STATUSES } from "../db/schema";
import { badRequest, conflict, notFound } from "../http/errors";
import { parseSince } from "../audit/log";
import { EVENT_TYPES } from "../outbox/events";
import { RETRY_DELAYS_MS, type OutboxRow } from "../outbox/store";
import type { Endpoint } from "./endpoints";

export type DeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
export const DELIVERIES_LIMIT = 100;
/** A replay sends this many rows at once; the retry job takes the rest, a batch at a time. */
export const REPLAY_AT_ONCE = 50;

/** The log entry of one attempt (or skip), for the write that settles the row; none once the endpoint is deleted. */
export function logEntry(
  row: Pick<OutboxRow, "id" | "endpoint_id" | "event_id" | "topic">,
  status: DeliveryStatus,
  attempt: { status: number | null; ms: number | null; response: string | null; error: string | null },
  at = now(),
): SQL {
  return sql`INSERT INTO webhook_deliveries (id, endpoint_id, outbox_id, event_id, event, status, status_code, latency_ms, response, error, attempted_at)
    SELECT ${`del_${sortableToken(24)}`}, id, ${row.id}, ${row.event_id ?? row.id}, ${row.topic}, ${status}, CAST(${attempt.status} AS integer), CAST(${attempt.ms} AS integer),
      CAST(${attempt.response} AS text), CAST(${attempt.error} AS text), ${at}
    FROM webhook_endpoints WHERE id = ${row.endpoint_id}`;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  event: string;
  status: DeliveryStatus;
  status_code: number | null;
  latency_ms: number | null;
  response: string | null;
  error: string | null;
  attempted_at: number;
}

const view = (d: DeliveryRow) => ({
  id: d.id,
  event_id: d.event_id,
  event: d.event,
  status: d.status,
  status_code: d.status_code === null ? null : Number(d.status_code),
  latency_ms: d.latency_ms === null ? null : Number(d.latency_ms),
  response: d.response,
  error: d.error,
  attempted_at: Number(d.attempted_at),
});

export async function deliveriesPage(db: Db, endpoint: Endpoint, q: { status?: DeliveryStatus; event?: string; since?: string; before?: string; limit?: number }) {
  const limit = q.limit ?? 50;
  const where: SQL[] = [sql`endpoint_id = ${endpoint.id}`];
  if (q.status !== undefined) where.push(sql`status = ${q.status}`);
  if (q.event !== undefined) {
    if (!(EVENT_TYPES as readonly string[]).includes(q.event)) throw badRequest(`event: "${q.event}" is not an event type (one of ${EVENT_TYPES.join(", ")})`);
    where.push(sql`event = ${q.event}`);
  }
  if (q.since !== undefined) where.push(sql`attempted_at >= ${parseSince(q.since)}`);
  if (q.before !== undefined) {
    const [cursor] = await db.rows<{ attempted_at: number }>(sql`SELECT attempted_at FROM webhook_deliveries WHERE id = ${q.before} AND endpoint_id = ${endpoint.id}`);
    if (!cursor) throw badRequest("before must be the next_cursor of a page of this delivery log");
    const at = Number(cursor.attempted_at);
    where.push(sql`(attempted_at < ${at} OR (attempted_at = ${at} AND id < ${q.before}))`);
  }
  const rows = await db.rows<DeliveryRow>(
    sql`SELECT id, event_id, event, status, status_code, latency_ms, response, error, attempted_at FROM webhook_deliveries
      WHERE ${sql.join(where, sql` AND `)} ORDER BY attempted_at DESC, id DESC LIMIT ${limit + 1}`,
  );
  const page = rows.slice(0, limit).map(view);
  return { deliveries: page, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
}

/**
 * Makes rows due now: one still retrying keeps its schedule; one failed gets one more attempt; one skipped is sent as
 * a new event would be. A row being sent right now is left to that attempt. Answers the ids of the rows made due.
 */
async function requeue(db: Db, where: SQL, at = now()): Promise<string[]> {
  const rows = await db.rows<{ id: string }>(
    sql`UPDATE outbox SET status = 'pending', next_attempt_at = ${at}, last_error = NULL,
        attempts = CASE status WHEN 'pending' THEN attempts WHEN 'skipped' THEN 0 ELSE ${RETRY_DELAYS_MS.length} END
      WHERE kind = 'webhook' AND ${where} AND (locked_until IS NULL OR locked_until < ${at}) RETURNING id`,
  );
  return rows.map((r) => r.id);
}

const mustBeEnabled = (endpoint: Endpoint) => {
  if (!endpoint.enabled) throw conflict("The endpoint is disabled: enable it first (PATCH enabled: true)");
};

/** Sends a delivery's event to its endpoint again now, with the same webhook-id (a delivered one too). */
export async function retryDelivery(db: Db, endpoint: Endpoint, deliveryId: string): Promise<{ eventId: string; rows: string[] }> {
  const [d] = await db.rows<{ outbox_id: string; event_id: string }>(sql`SELECT outbox_id, event_id FROM webhook_deliveries WHERE id = ${deliveryId} AND endpoint_id = ${endpoint.id}`);
  if (!d) throw notFound("Delivery not found");
  mustBeEnabled(endpoint);
  const rows = await db.tx((tx) => requeue(tx, sql`id = ${d.outbox_id} AND endpoint_id = ${endpoint.id}`));
  if (rows.length === 0) {
    const [row] = await db.rows<{ locked_until: number | null }>(sql`SELECT locked_until FROM outbox WHERE id = ${d.outbox_id}`);
    throw conflict(row ? "The event is being delivered right now" : "The event is no longer kept (events are kept 30 days)");
  }
  return { eventId: d.event_id, rows };
}

/** Sends again now every event since `since` that is not delivered: failed, still retrying, or skipped while disabled. */
export async function replay(db: Db, endpoint: Endpoint, since: number | string): Promise<string[]> {
  const from = typeof since === "number" ? since : parseSince(since);
  mustBeEnabled(endpoint);
  return db.tx((tx) => requeue(tx, sql`endpoint_id = ${endpoint.id} AND created_at >= ${from} AND status IN ('pending', 'failed', 'skipped')`));
}
