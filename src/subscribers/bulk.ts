// Issue 47: POST .../subscribers/bulk: up to 1,000 sign-up bodies in one transaction, each checked as a single sign-up
// is; an invalid item is reported and the rest go in. An email already there is skipped, or updated in `update` mode.
import { sql } from "drizzle-orm";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { AppError } from "../http/errors";
import { valueMessage } from "../http/validation";
import type { Dispatch } from "../outbox/events";
import { normalizeEmail } from "./email";
import { updateSubscriber } from "./manage";
import { splitMetadata } from "./metadata";
import { SignUpBody, type SignUpInput } from "./model";
import { signUp, type SignUpContext } from "./signup";
import { selectSubscribers, subscriberView, type SubscriberView } from "./view";

export const BULK_MAX = 1_000;
export type BulkMode = "skip" | "update";

export interface BulkResult {
  index: number;
  status: "created" | "updated" | "skipped" | "invalid";
  subscriber?: SubscriberView;
  error?: string;
}

/** What an existing subscriber takes from an item in `update` mode: name, phone and custom metadata (merged). */
function updateOf(item: SignUpInput): { name?: string | null; phone?: string | null; metadata?: Record<string, unknown> } | null {
  const change: { name?: string | null; phone?: string | null; metadata?: Record<string, unknown> } = {};
  if (item.name !== undefined) change.name = item.name;
  if (item.phone !== undefined) change.phone = item.phone;
  const custom = JSON.parse(splitMetadata(item.metadata).custom) as Record<string, unknown>;
  if (Object.keys(custom).length) change.metadata = custom;
  return Object.keys(change).length ? change : null;
}

/**
 * Runs the items in order in one transaction (a later item sees an earlier one: the same email twice is created, then
 * skipped or updated). Events and emails leave once it is committed; nothing of a failed request does.
 */
export async function bulkSignUp(db: Db, waitlist: Waitlist, items: unknown[], mode: BulkMode, ctx: SignUpContext): Promise<BulkResult[]> {
  const checked = items.map((item) => valueMessage(SignUpBody, item));
  let outgoing: string[] = [];
  const deferred: Dispatch = (ids) => void outgoing.push(...ids);
  const results = await db.tx(async (tx) => {
    outgoing = [];
    const done: (BulkResult & { email?: string })[] = [];
    for (const [index, item] of items.entries()) {
      const problem = checked[index];
      if (problem) {
        done.push({ index, status: "invalid", error: problem });
        continue;
      }
      const input = item as SignUpInput;
      const email = normalizeEmail(input.email);
      try {
        const [existing] = await tx.rows<{ id: string }>(sql`SELECT id FROM subscribers WHERE waitlist_id = ${waitlist.id} AND email = ${email}`);
        if (existing) {
          const change = mode === "update" ? updateOf(input) : null;
          if (change) await updateSubscriber(tx, waitlist, existing.id, change, ctx.baseUrl, deferred);
          done.push({ index, status: change ? "updated" : "skipped", email });
          continue;
        }
        const answer = await signUp(tx, waitlist, input, { ...ctx, dispatch: deferred });
        done.push({ index, status: answer.is_new_sign_up ? "created" : "skipped", email });
      } catch (err) {
        // a rule no schema holds (a disposable domain, an answer that does not fit): checked before anything is written
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        done.push({ index, status: "invalid", error: err.message });
      }
    }
    return done;
  });
  ctx.dispatch(outgoing);
  // the subscribers as committed, read together
  const emails = [...new Set(results.flatMap((r) => (r.email ? [r.email] : [])))];
  const rows = emails.length ? await selectSubscribers(db, sql`s.waitlist_id = ${waitlist.id} AND s.email IN (${sql.join(emails.map((e) => sql`${e}`), sql`, `)})`) : [];
  const byEmail = new Map(rows.map((r) => [r.email, subscriberView(r, waitlist, ctx.baseUrl)]));
  return results.map(({ email, ...r }) => (email && byEmail.has(email) ? { ...r, subscriber: byEmail.get(email)! } : r));
}
