// Issue 48: the audit log read back, newest first, a page at a time.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import { badRequest } from "../http/errors";

export const AUDIT_LIMIT = 100;

interface EntryRow {
  id: string;
  at: number;
  actor_type: "user" | "key";
  actor_id: string;
  actor_name: string;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** `since` as given: Unix ms or an ISO 8601 time. */
export function parseSince(value: string, field = "since"): number {
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Date.parse(value);
  if (!Number.isFinite(ms) || !/\d/.test(value)) throw badRequest(`${field} must be Unix ms or an ISO 8601 time, like 2026-12-01T00:00:00Z`);
  return ms;
}

export async function auditPage(db: Db, accountId: string, query: { actor?: string; action?: string; since?: string; before?: string; limit?: number }) {
  const limit = query.limit ?? 20;
  const where: SQL[] = [sql`account_id = ${accountId}`];
  if (query.actor) where.push(sql`actor_id = ${query.actor}`);
  if (query.action) {
    const family = `${query.action}.`;
    where.push(query.action.includes(".") ? sql`action = ${query.action}` : sql`substr(action, 1, ${family.length}) = ${family}`);
  }
  if (query.since !== undefined) where.push(sql`at >= ${parseSince(query.since)}`);
  if (query.before !== undefined) {
    const [cursor] = await db.rows<{ at: number }>(sql`SELECT at FROM audit_log WHERE id = ${query.before} AND account_id = ${accountId}`);
    if (!cursor) throw badRequest("before must be the next_cursor of a page of this audit log");
    where.push(sql`(at < ${Number(cursor.at)} OR (at = ${Number(cursor.at)} AND id < ${query.before}))`);
  }
  const rows = await db.rows<EntryRow>(sql`SELECT id, at, actor_type, actor_id, actor_name, action, target, ip, user_agent FROM audit_log
    WHERE ${sql.join(where, sql` AND `)} ORDER BY at DESC, id DESC LIMIT ${limit + 1}`);
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: Number(r.at),
      actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name },
      action: r.action,
      target: r.target,
      ip: r.ip,
      user_agent: r.user_agent,
    })),
    next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}
