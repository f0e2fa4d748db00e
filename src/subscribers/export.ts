// The export of every subscriber (DESIGN §4 extension; issue 47: every field, CSV or JSON Lines, filtered like the
// list), streamed page by page (csv-stringify for CSV) in constant memory.
import { sql, type SQL } from "drizzle-orm";
import { stringify } from "csv-stringify/sync";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { selectPage, statusOf, subscriberView, thankYouUrl, type SubscriberRow } from "./view";
import { listFilters, type ListParams } from "./query";
import { badRequest } from "../http/errors";
import { giveWay, stepSizer } from "../http/foreground";
import { answerText, formFieldsOf, type Answers } from "../waitlists/form-fields";

/**
 * Rows a page at most. A page is read and written out in one go on the event loop, so its rows are as many as take
 * about a step's time (foreground.ts `stepSizer`), and before each the requests in hand go first (`giveWay`): 500
 * rows of CSV held it ~20 ms a page, and a whole export of 30,000 rows never let a timer run (no memory budget
 * check, a heap of 750,000 objects).
 */
const PAGE = 500;
const COLUMNS = [
  "id", "email", "name", "phone", "status", "position", "inflated_position", "final_position", "points", "referral_code", "referred_by", "referral_count",
  "deliverability", "tags", "country", "city", "timezone", "ip_address", "referring_domain", "joined_with", "joined_at", "thank_you_url", "metadata",
  "unsubscribed_at", "email_status", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "referrer_host",
];

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
/** The list's parameters that page and sort it: the export takes neither (it is the whole list, in line order). */
const NOT_FOR_EXPORT = ["page", "limit", "sort_by", "sort_dir"];

/** The row's answers, one cell per question (parsed once a row). */
function answerCells(row: SubscriberRow, questions: string[]): string[] {
  if (questions.length === 0) return [];
  const answers = JSON.parse(row.answers ?? "{}") as Answers;
  return questions.map((key) => answerText(answers[key]));
}

/** A cell a spreadsheet would run as a formula gets a leading apostrophe (CSV formula injection). */
export const defuse = (value: string): string => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

function record(row: SubscriberRow, position: number | null, waitlist: Waitlist, baseUrl: string, questions: string[]): string[] {
  const tags = (JSON.parse(row.tags_json ?? "[]") as { name: string }[]).map((t) => t.name).join("; ");
  const ranked = position !== null;
  const confirmed = row.status === "confirmed";
  const cells = [
    row.id, row.email, row.name ?? "", row.phone ?? "", statusOf(row),
    ranked ? String(position) : "", ranked ? String(position + waitlist.positionOffset) : "", row.final_position === null ? "" : String(row.final_position),
    confirmed ? String(row.points) : "", confirmed ? row.referral_code : "", row.referred_by ?? "", String(row.referral_count), row.deliverability, tags,
    row.country ?? "", row.city ?? "", row.timezone ?? "", row.ip_address ?? "", row.referring_domain ?? "", row.joined_with,
    new Date(Number(row.joined_at)).toISOString(), confirmed ? thankYouUrl(baseUrl, row.sign_up_token) : "", row.metadata,
    // issue 16: who asked for no more email (an import into a mailing tool must honour it)
    row.unsubscribed_at === null ? "" : new Date(Number(row.unsubscribed_at)).toISOString(),
    // issue 45: bounced and complained addresses (a mailing tool must not write to them either)
    row.email_status,
    // issue 46: where they came from
    row.utm_source ?? "", row.utm_medium ?? "", row.utm_campaign ?? "", row.utm_term ?? "", row.utm_content ?? "", row.referrer_host ?? "",
    // issue 46: one column per question of the waitlist, `answers.KEY`
    ...answerCells(row, questions),
  ];
  return cells.map(defuse);
}

/**
 * Pages of rows: ranked subscribers in position order (walked by key, so each page costs the same), then the others by
 * sign-up time. `where` (the list's filters, alias `s`) narrows both; filtered rows carry their position in the whole
 * line (`withPosition`), unfiltered ones are numbered as they come.
 */
async function* pages(db: Db, waitlistId: string, where: SQL | null, size: () => number): AsyncGenerator<{ rows: SubscriberRow[]; ranked: boolean }> {
  const also = where ? sql`AND ${where}` : sql``;
  const withPosition = where !== null;
  let last: { points: number; seq: number } | null = null;
  for (;;) {
    const n = size();
    const page: SQL = last
      ? sql`SELECT * FROM (SELECT * FROM subscribers s WHERE s.waitlist_id = ${waitlistId} AND s.points = ${last.points} AND s.ranked_seq > ${last.seq} ${also} ORDER BY s.ranked_seq LIMIT ${n}) AS tied
            UNION ALL SELECT * FROM (SELECT * FROM subscribers s WHERE s.waitlist_id = ${waitlistId} AND s.points < ${last.points} AND s.ranked_seq IS NOT NULL ${also} ORDER BY s.points DESC, s.ranked_seq ASC LIMIT ${n}) AS behind`
      : sql`SELECT * FROM subscribers s WHERE s.waitlist_id = ${waitlistId} AND s.ranked_seq IS NOT NULL ${also} ORDER BY s.points DESC, s.ranked_seq ASC LIMIT ${n}`;
    const rows: SubscriberRow[] = (await selectPage(db, page, sql`s.points DESC, s.ranked_seq ASC`, withPosition)).slice(0, n);
    if (rows.length === 0) break;
    yield { rows, ranked: true };
    const tail: SubscriberRow = rows[rows.length - 1];
    last = { points: Number(tail.points), seq: Number(tail.ranked_seq) };
  }
  let after: { joinedAt: number; id: string } | null = null;
  for (;;) {
    const from = after ? sql`AND (s.joined_at > ${after.joinedAt} OR (s.joined_at = ${after.joinedAt} AND s.id > ${after.id}))` : sql``;
    const rows = await selectPage(
      db,
      sql`SELECT * FROM subscribers s ${db.d.indexHint("subscribers_unranked_idx")} WHERE s.waitlist_id = ${waitlistId} AND s.ranked_seq IS NULL ${from} ${also} ORDER BY s.joined_at ASC, s.id ASC LIMIT ${size()}`,
      sql`s.joined_at ASC, s.id ASC`,
      false,
    );
    if (rows.length === 0) return;
    yield { rows, ranked: false };
    const tail: SubscriberRow = rows[rows.length - 1];
    after = { joinedAt: Number(tail.joined_at), id: tail.id };
  }
}

/**
 * The export as a stream: `format` csv (a header row; a column per field and one per question) or jsonl (each line a
 * Subscriber object as GET answers it). The filters are checked before it starts: a bad one is a 400, not a broken file.
 */
export async function exportSubscribers(
  db: Db,
  waitlist: Waitlist,
  format: (typeof EXPORT_FORMATS)[number],
  params: Record<string, string>,
  baseUrl: string,
  request?: Request,
) {
  const paging = Object.keys(params).find((k) => NOT_FOR_EXPORT.includes(k));
  if (paging) throw badRequest(`Unknown query parameter "${paging}": the export is the whole list; it takes format, tag, status, unsubscribed, email_status, q and answers.KEY`);
  const filters = await listFilters(db, waitlist, params as ListParams);
  const where = filters.length > 1 ? sql.join(filters.slice(1), sql` AND `) : null;
  const encoder = new TextEncoder();
  const sizer = stepSizer(100, PAGE);
  const source = pages(db, waitlist.id, where, () => sizer.size);
  let position = 0;
  let started = format === "jsonl";
  const questions = formFieldsOf(waitlist).map((q) => q.key);
  /** Its place in the whole line: counted when unfiltered, read with the row when filtered. */
  const placeOf = (row: SubscriberRow, ranked: boolean) => (!ranked ? null : where ? Number(row.position) : ++position);
  return new ReadableStream<Uint8Array>({
    // every pull enqueues a chunk or closes: a pull that does neither would stall the stream
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(stringify([[...COLUMNS, ...questions.map((key) => `answers.${key}`)]])));
        return;
      }
      await giveWay(request);
      const pageStarted = performance.now();
      const next = await source.next();
      if (next.done) {
        controller.close();
        return;
      }
      const { rows, ranked } = next.value;
      const text =
        format === "jsonl"
          ? rows.map((r) => `${JSON.stringify(subscriberView({ ...r, position: placeOf(r, ranked) }, waitlist, baseUrl))}\n`).join("")
          : stringify(rows.map((r) => record(r, placeOf(r, ranked), waitlist, baseUrl, questions)));
      controller.enqueue(encoder.encode(text));
      sizer.took(performance.now() - pageStarted);
    },
    async cancel() {
      await source.return(undefined);
    },
  });
}
