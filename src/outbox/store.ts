// The outbox table's operations: enqueue inside a change's transaction, claim with a lease, settle.
import { sql, type SQL } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";

/** DESIGN §4: retries about 30 s, 2 m, 10 m, 1 h, 6 h, 24 h after failures, then failed. */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000];
/** How long a claimed row stays with its claimant before another may take it (a crash mid-send). */
export const CLAIM_MS = 60_000;

export interface OutboxRow {
  id: string;
  /** The event's id (webhook-id): one event is a row per endpoint (issue 49); an email's is its own id. */
  event_id: string | null;
  endpoint_id: string | null;
  kind: "email" | "webhook";
  topic: string;
  waitlist_id: string;
  subscriber_id: string | null;
  related_id: string | null;
  payload: string | null;
  status: string;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
}

export interface Message {
  kind: "email" | "webhook";
  topic: string;
  waitlistId: string;
  subscriberId?: string | SQL | null;
  relatedId?: string | SQL | null;
  /** Fixed at enqueue (subscriber.deleted: the subscriber as it was, given the event id); otherwise rendered after the commit. */
  payload?: ((id: string, createdAt: number) => string) | null;
}

const value = (v: string | SQL | null | undefined): SQL => (v === undefined || v === null ? sql`NULL` : typeof v === "string" ? sql`${v}` : v);

/**
 * An INSERT for the change's own transaction; `onlyIf` ties it to the change having happened. `id` is the event's:
 * an email is one row of that id; a webhook event a row per endpoint of the waitlist whose filter takes it (issue
 * 49), each `<event id>.<endpoint id>`, disabled endpoints included (their rows are skipped, and logged, at once).
 */
export function enqueue(m: Message, onlyIf: SQL = sql`TRUE`, at = now()): { id: string; statement: SQL } {
  const id = `evt_${sortableToken(24)}`;
  const payload = m.payload ? m.payload(id, at) : null;
  if (m.kind === "webhook") {
    return {
      id,
      statement: sql`INSERT INTO outbox (id, event_id, endpoint_id, kind, topic, waitlist_id, subscriber_id, related_id, payload, status, attempts, next_attempt_at, created_at)
        SELECT CAST(${id} AS text) || '.' || e.id, ${id}, e.id, 'webhook', ${m.topic}, ${m.waitlistId}, ${value(m.subscriberId)}, ${value(m.relatedId)}, ${payload}, 'pending', 0, ${at}, ${at}
        FROM webhook_endpoints e WHERE e.waitlist_id = ${m.waitlistId} AND (e.events = '[]' OR e.events LIKE ${`%"${m.topic}"%`}) AND ${onlyIf}`,
    };
  }
  return {
    id,
    statement: sql`INSERT INTO outbox (id, event_id, kind, topic, waitlist_id, subscriber_id, related_id, payload, status, attempts, next_attempt_at, created_at)
      SELECT ${id}, ${id}, ${m.kind}, ${m.topic}, ${m.waitlistId}, ${value(m.subscriberId)}, ${value(m.relatedId)}, ${payload}, 'pending', 0, ${at}, ${at}
      WHERE ${onlyIf}`,
  };
}

/** Deletes what the outbox holds about a subscriber who is being erased, but the rows of `keep` (its deletion event). */
export const forgetSubscriber = (subscriberId: string, keep: string[]): SQL =>
  sql`DELETE FROM outbox WHERE (subscriber_id = ${subscriberId} OR related_id = ${subscriberId})${keep.length ? sql` AND event_id NOT IN ${keep}` : sql``}`;

/** Which rows a claim takes: those of these events, these rows, an endpoint's rows about one subscriber, or any due. */
export type Which = { events: string[] } | { rows: string[] } | { endpoint: string; subscriber: string } | null;

/**
 * Claims the given rows, or up to `limit` due rows, for this attempt: one statement in a write group, safe across
 * instances. On PostgreSQL the pick locks what it reads and skips rows another claim holds (`skipLocked`), and the
 * UPDATE re-checks the lease on each row as it is once locked, so two instances never claim one row. The pick is a
 * MATERIALIZED CTE: as an `IN (subquery)` PostgreSQL may run it again per row, LIMIT and all (114 rows claimed of 50).
 */
export async function claim(db: Db, which: Which, limit = 20, at = now()): Promise<OutboxRow[]> {
  if (which && "events" in which && which.events.length === 0) return [];
  if (which && "rows" in which && which.rows.length === 0) return [];
  // issue 49: a webhook row waits while an earlier one of its endpoint about the same subscriber is due or being
  // sent, so a slow receiver gets one subscriber's events in order (a row waiting for its retry holds none back)
  const due = sql`status = 'pending' AND next_attempt_at <= ${at} AND (locked_until IS NULL OR locked_until < ${at})
    AND (kind <> 'webhook' OR NOT EXISTS (SELECT 1 FROM outbox o2 WHERE o2.kind = 'webhook' AND o2.endpoint_id = outbox.endpoint_id
      AND o2.subscriber_id = outbox.subscriber_id AND o2.status = 'pending' AND o2.next_attempt_at <= ${at} AND o2.id < outbox.id))`;
  const pick = !which
    ? sql`SELECT id FROM outbox WHERE ${due} ORDER BY next_attempt_at, id LIMIT ${limit} ${db.d.skipLocked}`
    : "events" in which
      ? sql`SELECT id FROM outbox WHERE event_id IN ${which.events} AND ${due} ${db.d.skipLocked}`
      : "rows" in which
        ? sql`SELECT id FROM outbox WHERE id IN ${which.rows} AND ${due} ${db.d.skipLocked}`
        : sql`SELECT id FROM outbox WHERE kind = 'webhook' AND endpoint_id = ${which.endpoint} AND subscriber_id = ${which.subscriber} AND ${due} ORDER BY id LIMIT ${limit} ${db.d.skipLocked}`;
  const [rows] = await db.write([
    sql`WITH picked AS MATERIALIZED (${pick})
      UPDATE outbox SET locked_until = ${at + CLAIM_MS}, attempts = attempts + 1 WHERE id IN (SELECT id FROM picked) AND ${due} RETURNING *`,
  ]);
  return rows as unknown as OutboxRow[];
}

export const storePayload = (db: Db, id: string, payload: string) => db.exec(sql`UPDATE outbox SET payload = ${payload} WHERE id = ${id} AND payload IS NULL`);

/**
 * What a settled row also changes, in the same commit: a broadcast's recipient takes the row's outcome (issue 45), so
 * a broadcast's counts hold after its outbox rows are pruned.
 */
export type Outcome = "sent" | "failed" | "bounced" | "skipped";
const recipient = (row: Pick<OutboxRow, "topic" | "related_id" | "subscriber_id">, outcome: Outcome, at: number): SQL[] =>
  row.topic === "broadcast" && row.related_id && row.subscriber_id
    ? [sql`UPDATE broadcast_recipients SET status = ${outcome}, updated_at = ${at} WHERE broadcast_id = ${row.related_id} AND subscriber_id = ${row.subscriber_id}`]
    : [];

type Settled = Pick<OutboxRow, "id" | "topic" | "related_id" | "subscriber_id">;

/** `payload`: the rendering sent, kept with the outcome when the row has none yet (an email's). */
export const markSent = (db: Db, row: Settled, status: number | null, payload: string | null = null, at = now(), also: SQL[] = []) =>
  db.write([
    sql`UPDATE outbox SET status = 'sent', sent_at = ${at}, last_status = ${status}, last_error = NULL, locked_until = NULL, payload = coalesce(payload, ${payload}) WHERE id = ${row.id}`,
    ...recipient(row, "sent", at),
    ...also,
  ]);

/**
 * After the last retry (or a permanent failure: `final`) the row is failed; before it, due again after the schedule's
 * delay ±10%. `also`: what the outcome writes beside it (a webhook's delivery log entry, issue 49), told whether the
 * row will be retried.
 */
export function markFailed(
  db: Db,
  row: OutboxRow,
  error: string,
  status: number | null,
  opts: { final?: Outcome; payload?: string; random?: () => number; at?: number; also?: (retrying: boolean) => SQL[] } = {},
) {
  const at = opts.at ?? now();
  const keep = sql`payload = coalesce(payload, ${opts.payload ?? null})`;
  const delay = opts.final ? undefined : RETRY_DELAYS_MS[row.attempts - 1];
  if (delay === undefined) {
    return db.write([
      sql`UPDATE outbox SET status = 'failed', last_error = ${error}, last_status = ${status}, locked_until = NULL, ${keep} WHERE id = ${row.id}`,
      ...recipient(row, opts.final ?? "failed", at),
      ...(opts.also?.(false) ?? []),
    ]);
  }
  const due = at + Math.round(delay * (0.9 + 0.2 * (opts.random ?? Math.random)()));
  return db.write([
    sql`UPDATE outbox SET next_attempt_at = ${due}, last_error = ${error}, last_status = ${status}, locked_until = NULL, ${keep} WHERE id = ${row.id}`,
    ...(opts.also?.(true) ?? []),
  ]);
}

/** Keeps a row pending without spending an attempt (an email while SMTP_URL is unset). */
export const hold = (db: Db, id: string, reason: string, until: number) =>
  db.exec(sql`UPDATE outbox SET attempts = attempts - 1, next_attempt_at = ${until}, last_error = ${reason}, locked_until = NULL WHERE id = ${id}`);

export const HELD_NO_SMTP = "held: SMTP_URL is not set";

/** With SMTP configured, emails held for the lack of it become due now. */
export const releaseHeldEmails = (db: Db, at = now()) =>
  db.exec(sql`UPDATE outbox SET next_attempt_at = ${at} WHERE kind = 'email' AND status = 'pending' AND last_error = ${HELD_NO_SMTP}`);

const KEPT_MS = 30 * 86_400_000;

/**
 * Sent rows are kept 30 days (DESIGN §1); so are a webhook's delivery log and the events skipped while its endpoint
 * was disabled (issue 49: a replay within them sends those). Failed rows stay.
 */
export async function pruneSent(db: Db, at = now()) {
  await db.exec(sql`DELETE FROM outbox WHERE status = 'sent' AND sent_at < ${at - KEPT_MS}`);
  await db.exec(sql`DELETE FROM outbox WHERE kind = 'webhook' AND status = 'skipped' AND created_at < ${at - KEPT_MS}`);
  await db.exec(sql`DELETE FROM webhook_deliveries WHERE attempted_at < ${at - KEPT_MS}`);
}

/** Gives up on a row at once (what it describes is gone, its webhook was switched off, its email withheld). */
export const abandon = (db: Db, row: Settled, reason: string, at = now(), also: SQL[] = []) =>
  db.write([sql`UPDATE outbox SET status = 'failed', last_error = ${reason}, locked_until = NULL WHERE id = ${row.id}`, ...recipient(row, "skipped", at), ...also]);

/** The whole retry schedule with its jitter: how long a retry may wait for a disabled endpoint (issue 49). */
export const SCHEDULE_MS = Math.round(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) * 1.1);

/** A webhook row whose endpoint is disabled at its first attempt: kept, not sent (a replay sends it). */
export const markSkipped = (db: Db, row: Settled, also: SQL[]) =>
  db.write([sql`UPDATE outbox SET status = 'skipped', attempts = 0, last_error = 'skipped: the endpoint is disabled', locked_until = NULL WHERE id = ${row.id}`, ...also]);

/** A retry that came due while its endpoint is disabled waits, without spending an attempt, until its schedule's end. */
export const holdForEndpoint = (db: Db, row: Pick<OutboxRow, "id" | "created_at">, reason: string) =>
  hold(db, row.id, reason, Number(row.created_at) + SCHEDULE_MS);
