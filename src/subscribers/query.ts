// Reading subscribers: one by id or email, and the paginated, sorted, filtered list (spec: GET .../subscribers).
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import { foldName } from "../db/fold";
import { formFieldsOf } from "../waitlists/form-fields";
import type { Waitlist } from "../http/api";
import { badRequest, notFound } from "../http/errors";
import { normalizeEmail } from "./email";
import { keyAtRank } from "./rank";
import { selectPage, selectSubscribers, subscriberView, type SubscriberRow } from "./view";

/** `{idOrEmail}`: an email when it contains "@", else an id; always within the path's waitlist. */
export function subscriberRef(waitlistId: string, idOrEmail: string): SQL {
  const ref = idOrEmail.trim();
  if (!ref) throw badRequest("Missing subscriber id or email");
  return ref.includes("@") ? sql`s.waitlist_id = ${waitlistId} AND s.email = ${normalizeEmail(ref)}` : sql`s.waitlist_id = ${waitlistId} AND s.id = ${ref}`;
}

export async function findSubscriber(db: Db, waitlistId: string, idOrEmail: string): Promise<SubscriberRow> {
  const [row] = await selectSubscribers(db, subscriberRef(waitlistId, idOrEmail));
  if (!row) throw notFound("Subscriber not found");
  return row;
}

export async function getSubscriber(db: Db, waitlist: Waitlist, idOrEmail: string, baseUrl: string) {
  return subscriberView(await findSubscriber(db, waitlist.id, idOrEmail), waitlist, baseUrl);
}

export const SORTS = ["position", "points", "date", "referral_count", "email"] as const;
export type Sort = (typeof SORTS)[number];

export interface ListParams {
  /** Integers as text, in their bounds by the route's schema (ListQuery). */
  page?: string;
  limit?: string;
  sort_by?: Sort;
  sort_dir?: "asc" | "desc";
  tag?: string;
  q?: string;
  status?: "pending" | "waiting" | "invited" | "joined" | "rejected";
  unsubscribed?: "true" | "false";
  email_status?: "ok" | "bounced" | "complained";
}

/** DESIGN §4: list parameters are strict; nothing is clamped or defaulted silently. */
/** Order clauses on alias `s`; pending subscribers (no position) always come after the ranked ones. */
function orderOf(sort: Sort, dir: "asc" | "desc"): SQL {
  const d = sql.raw(dir.toUpperCase());
  const reverse = sql.raw(dir === "asc" ? "DESC" : "ASC");
  switch (sort) {
    case "position":
      return sql`(s.ranked_seq IS NULL), s.points ${reverse}, s.ranked_seq ${d}, s.joined_at ASC, s.id ASC`;
    case "points":
      return sql`(s.ranked_seq IS NULL), s.points ${d}, s.ranked_seq ASC, s.joined_at ASC, s.id ASC`;
    case "date":
      return sql`s.joined_at ${d}, s.id ${d}`;
    case "referral_count":
      return sql`s.referral_count ${d}, s.joined_at ASC, s.id ASC`;
    case "email":
      return sql`s.email ${d}, s.id ${d}`;
  }
}

async function tagFilter(db: Db, waitlistId: string, tag: string): Promise<SQL> {
  const all = await db.rows<{ id: string; name: string; name_key: string }>(
    sql`SELECT id, name, name_key FROM tags WHERE waitlist_id = ${waitlistId} ORDER BY ${db.d.bytewise(sql`name_key`)}`,
  );
  const wanted = foldName(tag.trim());
  const found = all.find((t) => t.id === tag.trim() || t.name_key === wanted);
  if (!found) {
    const names = all.map((t) => t.name);
    throw badRequest(`Unknown tag "${tag}". ${names.length ? `This waitlist's tags: ${names.join(", ")}` : "This waitlist has no tags"}`);
  }
  return sql`EXISTS (SELECT 1 FROM subscriber_tags st WHERE st.subscriber_id = s.id AND st.tag_id = ${found.id})`;
}

const LIST_PARAMS = new Set(["page", "limit", "sort_by", "sort_dir", "tag", "q", "status", "unsubscribed", "email_status"]);

/**
 * Issue 46: `answers.KEY=VALUE`, an answer equal to VALUE (a multiselect's holding it; a checkbox's true or false; a
 * number's equal as a number). Answers are stored as JSON written by one function (JSON.stringify of checked values,
 * no spaces, keys of [a-z0-9_]), so a scalar answer is the text `"KEY":VALUE` followed by `,` or `}`, found as it is.
 */
function answerFilters(db: Db, waitlist: Waitlist, params: ListParams): SQL[] {
  const out: SQL[] = [];
  let questions: ReturnType<typeof formFieldsOf> | undefined;
  for (const [name, raw] of Object.entries(params as Record<string, string | undefined>)) {
    if (LIST_PARAMS.has(name) || raw === undefined) continue;
    // read only when the list asks for an answer: most lists do not
    questions ??= formFieldsOf(waitlist);
    const key = /^answers\.([a-z][a-z0-9_]{0,39})$/.exec(name)?.[1];
    if (!key) throw badRequest(`Unknown query parameter "${name}"; allowed: ${[...LIST_PARAMS].join(", ")} and answers.KEY`);
    const q = questions.find((f) => f.key === key);
    if (!q) throw badRequest(`${name}: "${key}" is not a question of this waitlist${questions.length ? `; its questions: ${questions.map((f) => f.key).join(", ")}` : ""}`);
    if (q.type === "multiselect") {
      out.push(db.d.jsonArrayHas(sql`s.answers`, key, raw));
      continue;
    }
    let value: string | number | boolean = raw;
    if (q.type === "checkbox") {
      if (raw !== "true" && raw !== "false") throw badRequest(`${name} must be true or false`);
      value = raw === "true";
    } else if (q.type === "number") {
      value = Number(raw);
      if (!raw.trim() || !Number.isFinite(value)) throw badRequest(`${name} must be a number`);
    }
    const member = `"${key}":${JSON.stringify(value)}`;
    out.push(sql`(${db.d.includes(sql`s.answers`, `${member},`)} OR ${db.d.includes(sql`s.answers`, `${member}}`)})`);
  }
  return out;
}

/** `%q%` with LIKE's own characters escaped; `q` as the column it is compared with spells it. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The list's filters on alias `s`, the waitlist's first (a list without any other is the whole line); the export
 * takes the same (issue 47). An unknown tag or parameter, or a bad answer filter, is a 400.
 */
export async function listFilters(db: Db, waitlist: Waitlist, params: ListParams): Promise<SQL[]> {
  const filters: SQL[] = [sql`s.waitlist_id = ${waitlist.id}`];
  if (params.tag !== undefined) filters.push(await tagFilter(db, waitlist.id, params.tag));
  if (params.status === "pending") filters.push(sql`s.status = 'pending'`);
  else if (params.status) filters.push(sql`s.status = 'confirmed' AND s.access = ${params.status}`);
  if (params.unsubscribed !== undefined) filters.push(params.unsubscribed === "true" ? sql`s.unsubscribed_at IS NOT NULL` : sql`s.unsubscribed_at IS NULL`);
  if (params.email_status !== undefined) filters.push(sql`s.email_status = ${params.email_status}`);
  filters.push(...answerFilters(db, waitlist, params));
  const q = params.q?.trim();
  // emails are stored lowercased, names compared by their folded key (db/fold-names.ts): the same on both engines
  if (q) filters.push(sql`(s.email LIKE ${likePattern(q.toLowerCase())} ESCAPE '\\' OR s.name_key LIKE ${likePattern(foldName(q))} ESCAPE '\\')`);
  return filters;
}

export async function listSubscribers(db: Db, waitlist: Waitlist, params: ListParams, baseUrl: string) {
  const page = params.page === undefined ? 1 : Number(params.page);
  const limit = params.limit === undefined ? 20 : Number(params.limit);
  const sort = params.sort_by ?? "date";
  const dir = params.sort_dir ?? "desc";
  const offset = (page - 1) * limit;

  const filters = await listFilters(db, waitlist, params);
  const where = sql.join(filters, sql` AND `);

  let total: number;
  let rows: SubscriberRow[];
  if (filters.length === 1) {
    const [{ ranked, unranked }] = await db.rows<{ ranked: number; unranked: number }>(sql`SELECT
      (SELECT CAST(coalesce(sum(count), 0) AS BIGINT) FROM rank_counts WHERE waitlist_id = ${waitlist.id} AND level = 63) AS ranked,
      (SELECT count(*) FROM subscribers ${db.d.indexHint("subscribers_unranked_idx")} WHERE waitlist_id = ${waitlist.id} AND ranked_seq IS NULL) AS unranked`);
    total = Number(ranked) + Number(unranked);
    rows = sort === "position" ? await rankedPage(db, waitlist.id, Number(ranked), dir, offset, limit) : [];
  } else {
    const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM subscribers s WHERE ${where}`);
    total = Number(n);
  }
  if (!(filters.length === 1 && sort === "position")) {
    const order = orderOf(sort, dir);
    rows = offset < total ? await selectPage(db, sql`SELECT * FROM subscribers s WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`, order) : [];
  }
  return {
    subscribers: rows!.map((r) => subscriberView(r, waitlist, baseUrl)),
    total,
    page,
    limit,
    pages: Math.ceil(total / limit),
  };
}

/**
 * The unfiltered list by position: the page's first ranked row is found through the rank counters
 * (DESIGN §7), then read by index from there, and its positions are simply consecutive from that
 * row's; pending subscribers (no position) follow the ranked ones.
 */
async function rankedPage(db: Db, waitlistId: string, rankedCount: number, dir: "asc" | "desc", offset: number, limit: number): Promise<SubscriberRow[]> {
  const order = orderOf("position", dir);
  let ranked: SubscriberRow[] = [];
  if (offset < rankedCount) {
    const start = await keyAtRank(db, waitlistId, dir === "asc" ? offset : rankedCount - 1 - offset);
    if (start) {
      const page =
        dir === "asc"
          ? sql`SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points = ${start.points} AND ranked_seq >= ${start.seq} ORDER BY ranked_seq ASC LIMIT ${limit}) AS tied
                UNION ALL SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points < ${start.points} AND ranked_seq IS NOT NULL ORDER BY points DESC, ranked_seq ASC LIMIT ${limit}) AS behind`
          : sql`SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points = ${start.points} AND ranked_seq <= ${start.seq} ORDER BY ranked_seq DESC LIMIT ${limit}) AS tied
                UNION ALL SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points > ${start.points} AND ranked_seq IS NOT NULL ORDER BY points ASC, ranked_seq DESC LIMIT ${limit}) AS ahead`;
      const rows = (await selectPage(db, page, order, false)).slice(0, limit);
      ranked = rows.map((row, i) => ({ ...row, position: dir === "asc" ? offset + 1 + i : rankedCount - offset - i }));
    }
  }
  if (ranked.length === limit) return ranked;
  const pending = await selectPage(
    db,
    sql`SELECT * FROM subscribers ${db.d.indexHint("subscribers_unranked_idx")} WHERE waitlist_id = ${waitlistId} AND ranked_seq IS NULL ORDER BY joined_at ASC, id ASC LIMIT ${limit - ranked.length} OFFSET ${Math.max(0, offset - rankedCount)}`,
    sql`s.joined_at ASC, s.id ASC`,
    false,
  );
  return [...ranked, ...pending];
}
