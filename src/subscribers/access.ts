// Letting people in (issue 11): invite the next N waiting by rank (or given subscribers), reject, and
// the single-use invite link that marks a subscriber joined. Positions close up at once: only
// `waiting` subscribers are ranked (the rank triggers follow `access`).
import { sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import { lockLine } from "./lock";
import type { Waitlist } from "../http/api";
import { AppError, badRequest, notFound } from "../http/errors";
import { email, nothing, webhookEvent, type Dispatch } from "../outbox/events";
import { writeAbout } from "../outbox/render";
import { normalizeEmail } from "./email";
import { findSubscriber } from "./query";
import { positionOf } from "./rank";
import { selectSubscribers, statusOf, subscriberView, type SubscriberRow } from "./view";

const DAY_MS = 86_400_000;
export const INVITE_MAX = 1000;

export interface InviteInput {
  count?: number;
  ids?: string[];
  emails?: string[];
}

/**
 * Moves the chosen waiting subscribers to `invited` in one transaction, each with its position
 * kept as `final_position`, a fresh invite token, one invitation email and one `subscriber.invited`
 * webhook. Subscribers already invited are left as they are (inviting is idempotent); pending,
 * joined and rejected ones are skipped and reported. An unknown id or email changes nothing (404).
 */
export async function invite(db: Db, w: Waitlist, input: InviteInput, baseUrl: string, dispatch: Dispatch) {
  const given = [input.count !== undefined, input.ids !== undefined, input.emails !== undefined].filter(Boolean).length;
  if (given !== 1) throw badRequest("Give exactly one of count (the next N waiting, by position), ids or emails");
  const at = now();
  // built inside the transaction: PostgreSQL may run it again after a deadlock
  const { targets, out } = await db.tx(async (tx) => {
    const out = nothing();
    // invites of one waitlist take turns (on SQLite the transaction's write lock does it): two at once never pick
    // the same next N, and the line a read sees stays so until the updates below
    await tx.rows(sql`SELECT 1 FROM waitlists WHERE id = ${w.id}${tx.d.forUpdate}`);
    let rows: SubscriberRow[];
    if (input.count !== undefined) {
      // the next N in line: rank order over the ranked index
      rows = await tx.rows<SubscriberRow>(selectOrdered(tx, w.id, input.count));
    } else {
      const wanted = input.ids ?? (input.emails ?? []).map((e) => normalizeEmail(e));
      const column = input.ids ? sql`s.id` : sql`s.email`;
      rows = wanted.length
        ? await tx.rows<SubscriberRow>(
            sql`SELECT s.*, ${positionOf("s")} AS position, '[]' AS tags_json FROM subscribers s
              WHERE s.waitlist_id = ${w.id} AND ${column} IN ${wanted}${tx.d.forUpdate}`,
          )
        : [];
      const found = new Set(rows.map((r) => (input.ids ? r.id : r.email)));
      const missing = [...new Set(wanted)].filter((v) => !found.has(v));
      if (missing.length) throw notFound(`Unknown subscriber${missing.length === 1 ? "" : "s"}: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`);
    }
    for (const row of rows) {
      if (row.status !== "confirmed" || row.access !== "waiting") continue;
      const inviteToken = token(32);
      await tx.exec(sql`UPDATE subscribers SET access = 'invited', final_position = ${row.position}, invite_token = ${inviteToken}, invited_at = ${at},
        invite_expires_at = ${at + w.inviteExpiryDays * DAY_MS}, updated_at = ${at} WHERE id = ${row.id} AND access = 'waiting'`);
      const mine = sql`EXISTS (SELECT 1 FROM subscribers WHERE id = ${row.id} AND invite_token = ${inviteToken})`;
      email(out, w, "invitation", row.id, mine);
      webhookEvent(out, w, "subscriber.invited", row.id, mine);
    }
    for (const statement of out.statements) await tx.exec(statement);
    return { targets: rows.map((r) => r.id), out };
  });
  dispatch(out.ids);
  const after = targets.length ? await selectSubscribers(db, sql`s.id IN ${targets}`) : [];
  const byId = new Map(after.map((r) => [r.id, r]));
  const ordered = targets.map((id) => byId.get(id)).filter((r): r is SubscriberRow => r !== undefined);
  return {
    invited: ordered.filter((r) => statusOf(r) === "invited").map((r) => subscriberView(r, w, baseUrl)),
    skipped: ordered.filter((r) => statusOf(r) !== "invited").map((r) => ({ id: r.id, email: r.email, status: statusOf(r) })),
  };
}

/** The first `n` waiting subscribers in rank order, each with its position (1..n by construction), locked until the transaction ends. */
function selectOrdered(tx: Db, waitlistId: string, n: number) {
  return sql`SELECT s.*, row_number() OVER (ORDER BY s.points DESC, s.ranked_seq ASC) AS position, '[]' AS tags_json FROM (
    SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND ranked_seq IS NOT NULL ORDER BY points DESC, ranked_seq ASC LIMIT ${n}${tx.d.forUpdate}) AS s
    ORDER BY position`;
}

/**
 * Out of line for good: waiting or invited subscribers only, with a `subscriber.rejected` webhook
 * (issue 16). An invited subscriber's link is withdrawn: the token is kept so that its page can say
 * so (410), but it no longer admits anyone. Rejecting again changes nothing and sends nothing.
 */
export async function reject(db: Db, w: Waitlist, idOrEmail: string, baseUrl: string, dispatch: Dispatch) {
  const row = await findSubscriber(db, w.id, idOrEmail);
  if (row.status !== "confirmed") throw new AppError("conflict", "A subscriber pending confirmation has no place in line to reject");
  if (row.access === "joined") throw new AppError("conflict", "This subscriber has already joined");
  if (row.access !== "rejected") {
    const out = webhookEvent(nothing(), w, "subscriber.rejected", row.id, sql`${db.d.prevChanged} = 1`);
    const [, updated] = await writeAbout(db, w, row.id, baseUrl, [
      lockLine(db, w.id),
      sql`UPDATE subscribers SET access = 'rejected', final_position = coalesce(${row.position}, final_position),
        updated_at = ${now()} WHERE id = ${row.id} AND access = ${row.access} RETURNING id`,
      ...out.statements,
    ]);
    if (updated.length > 0) dispatch(out.ids);
  }
  return subscriberView(await findSubscriber(db, w.id, row.id), w, baseUrl);
}

export type InviteState = "invited" | "joined" | "expired" | "revoked";

/** What a token says now: whose it is and whether it is (still) good. */
export function inviteState(row: SubscriberRow, at = now()): InviteState {
  if (row.access === "joined") return "joined";
  if (row.access !== "invited") return "revoked";
  return row.invite_expires_at !== null && at > Number(row.invite_expires_at) ? "expired" : "invited";
}

export async function findByInviteToken(db: Db, inviteToken: string): Promise<SubscriberRow | undefined> {
  if (!/^[A-Za-z0-9]{1,64}$/.test(inviteToken)) return undefined;
  return (await selectSubscribers(db, sql`s.invite_token = ${inviteToken}`))[0];
}

/** The invite link was followed: joined once (of two clicks at once, one joins); later clicks only see the state. */
export async function acceptInvite(db: Db, w: Waitlist, row: SubscriberRow, dispatch: Dispatch): Promise<InviteState> {
  const state = inviteState(row);
  if (state !== "invited") return state;
  const at = now();
  const out = webhookEvent(nothing(), w, "subscriber.joined", row.id, sql`${db.d.prevChanged} = 1`);
  const [, updated] = await db.write([
    lockLine(db, w.id),
    sql`UPDATE subscribers SET access = 'joined', accepted_at = ${at}, updated_at = ${at}
      WHERE id = ${row.id} AND access = 'invited' AND invite_token = ${row.invite_token} RETURNING id`,
    ...out.statements,
  ]);
  if (updated.length === 0) return inviteState((await findByInviteToken(db, row.invite_token!)) ?? row);
  dispatch(out.ids);
  return "invited";
}
