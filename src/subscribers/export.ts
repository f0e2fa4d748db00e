// CSV export of every subscriber (DESIGN §4 extension), streamed page by page through csv-stringify.
import { sql, type SQL } from "drizzle-orm";
import { stringify } from "csv-stringify/sync";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { selectPage, statusOf, thankYouUrl, type SubscriberRow } from "./view";
import { answerText, formFieldsOf, type Answers } from "../waitlists/form-fields";

const PAGE = 500;
const COLUMNS = [
  "id", "email", "name", "phone", "status", "position", "inflated_position", "final_position", "points", "referral_code", "referred_by", "referral_count",
  "deliverability", "tags", "country", "city", "timezone", "ip_address", "referring_domain", "joined_with", "joined_at", "thank_you_url", "metadata",
  "unsubscribed_at", "email_status",
];

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
    // issue 46: one column per question of the waitlist, `answers.KEY`
    ...answerCells(row, questions),
  ];
  return cells.map(defuse);
}

/** Pages of rows: ranked subscribers in position order (walked by key, so each page costs the same), then pending ones. */
async function* pages(db: Db, waitlistId: string): AsyncGenerator<{ rows: SubscriberRow[]; ranked: boolean }> {
  let last: { points: number; seq: number } | null = null;
  for (;;) {
    const page: SQL = last
      ? sql`SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points = ${last.points} AND ranked_seq > ${last.seq} ORDER BY ranked_seq LIMIT ${PAGE}) AS tied
            UNION ALL SELECT * FROM (SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND points < ${last.points} AND ranked_seq IS NOT NULL ORDER BY points DESC, ranked_seq ASC LIMIT ${PAGE}) AS behind`
      : sql`SELECT * FROM subscribers WHERE waitlist_id = ${waitlistId} AND ranked_seq IS NOT NULL ORDER BY points DESC, ranked_seq ASC LIMIT ${PAGE}`;
    const rows: SubscriberRow[] = (await selectPage(db, page, sql`s.points DESC, s.ranked_seq ASC`, false)).slice(0, PAGE);
    if (rows.length === 0) break;
    yield { rows, ranked: true };
    const tail: SubscriberRow = rows[rows.length - 1];
    last = { points: Number(tail.points), seq: Number(tail.ranked_seq) };
  }
  let after: { joinedAt: number; id: string } | null = null;
  for (;;) {
    const from = after ? sql`AND (joined_at > ${after.joinedAt} OR (joined_at = ${after.joinedAt} AND id > ${after.id}))` : sql``;
    const rows = await selectPage(
      db,
      sql`SELECT * FROM subscribers ${db.d.indexHint("subscribers_unranked_idx")} WHERE waitlist_id = ${waitlistId} AND ranked_seq IS NULL ${from} ORDER BY joined_at ASC, id ASC LIMIT ${PAGE}`,
      sql`s.joined_at ASC, s.id ASC`,
      false,
    );
    if (rows.length === 0) return;
    yield { rows, ranked: false };
    const tail: SubscriberRow = rows[rows.length - 1];
    after = { joinedAt: Number(tail.joined_at), id: tail.id };
  }
}

export function exportCsv(db: Db, waitlist: Waitlist, baseUrl: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const source = pages(db, waitlist.id);
  let position = 0;
  let started = false;
  const questions = formFieldsOf(waitlist).map((q) => q.key);
  return new ReadableStream<Uint8Array>({
    // every pull enqueues a chunk or closes: a pull that does neither would stall the stream
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(stringify([[...COLUMNS, ...questions.map((key) => `answers.${key}`)]])));
        return;
      }
      const next = await source.next();
      if (next.done) {
        controller.close();
        return;
      }
      const { rows, ranked } = next.value;
      controller.enqueue(encoder.encode(stringify(rows.map((r) => record(r, ranked ? ++position : null, waitlist, baseUrl, questions)))));
    },
    async cancel() {
      await source.return(undefined);
    },
  });
}
