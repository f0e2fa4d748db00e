// Fixed one-minute windows counted in the database, so every instance shares them (DESIGN §5).
import { sql, type SQL } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";

export const WINDOW_MS = 60_000;

export interface RateDecision {
  limit: number;
  remaining: number;
  /** End of the window, whole Unix seconds. */
  reset: number;
  allowed: boolean;
  /** Whole seconds until the window ends, 1 to 60. */
  retryAfter: number;
}

/**
 * One statement, the same on both engines: counts the request unless the window is full. A full window returns no
 * row, so a refused request leaves the counter as it was.
 */
export function countRequest(subject: string, limit: number, at: number): { statement: SQL; windowStart: number } {
  const windowStart = at - (at % WINDOW_MS);
  return {
    windowStart,
    statement: sql`INSERT INTO rate_limits (subject, window_start, count) VALUES (${subject}, ${windowStart}, 1)
      ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limits.count + 1 WHERE rate_limits.count < ${limit}
      RETURNING count`,
  };
}

export function decide(limit: number, windowStart: number, counted: number | null, at: number): RateDecision {
  const end = windowStart + WINDOW_MS;
  return {
    limit,
    remaining: counted === null ? 0 : Math.max(0, limit - counted),
    reset: Math.ceil(end / 1000),
    allowed: counted !== null,
    retryAfter: Math.min(60, Math.max(1, Math.ceil((end - at) / 1000))),
  };
}

/**
 * Counts one request against `subject`'s window, with `also` in the same atomic write (SQLite: grouped with the
 * concurrent requests of this turn; PostgreSQL: one transaction).
 */
export async function countAndDecide(db: Db, subject: string, limit: number, also: SQL[] = []): Promise<RateDecision> {
  const at = now();
  const { statement, windowStart } = countRequest(subject, limit, at);
  const [rows] = await db.write([statement, ...also]);
  return decide(limit, windowStart, rows.length ? Number(rows[0].count) : null, at);
}

/** With RATE_LIMITS=off nothing is counted; the headers describe a fresh window. */
export const uncounted = (limit: number, at: number): RateDecision => decide(limit, at - (at % WINDOW_MS), 1, at);

/** The X-RateLimit-* headers; a refused request also gets Retry-After, equal to the body's retry_after (issue 16). */
export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(d.reset),
    ...(d.allowed ? {} : { "retry-after": String(d.retryAfter) }),
  };
}

/** Expired windows are pruned by cron after an hour (DESIGN §1): `db.exec(pruneRateLimitsQuery(before))` on either engine. */
export const pruneRateLimitsQuery = (before: number): SQL => sql`DELETE FROM rate_limits WHERE window_start < ${before}`;

