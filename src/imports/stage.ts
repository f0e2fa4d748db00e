// Issue 47: an import's first step: the CSV read as it streams in (csv-parse), each record mapped and staged in
// import_rows 200 at a time, in constant memory; the import's row is written last, so an upload that breaks off (a bad
// quote, a dropped connection, a crash) leaves no import, and its staged rows are removed (or pruned).
import { once } from "node:events";
import { Readable } from "node:stream";
import { parse } from "csv-parse";
import { sql } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { AppError, badRequest } from "../http/errors";
import { inBackground } from "../background";
import { giveWay, paced, rest, STEP_MS, stepSizer } from "../http/foreground";
import { mapColumns, readRow, type Field } from "./mapping";

/**
 * Rows a statement at most. The file is read as its request's body comes, on the event loop: after each statement, each
 * piece parsed and each STEP_MS of rows read, the requests in hand other than the upload go first (foreground.ts), as
 * for the run's batches (200 rows read in one go held the event loop 6-12 ms at a time); a statement's rows take as long
 * as its fixed part (`stepSizer`, `holds: false`), and while requests come it rests as long again after each (`rest`).
 */
const STAGE_BATCH = 500;
/** The file is parsed this much at a time, giving way between (~1 ms of parsing). */
const PIECE_BYTES = 16_384;
/** A staged row left without its import (an upload cut off by a crash) is pruned after this long. */
export const ORPHAN_MS = 6 * 3_600_000;

export interface ImportOptions {
  mode: "skip" | "update";
  dryRun: boolean;
  notify: boolean;
  mapping?: Record<string, string>;
}

/** Options as text (query parameters, multipart fields, CLI flags), checked: 400 naming the one that is wrong. */
export function importOptions(given: Record<string, string | undefined>): ImportOptions {
  const flag = (name: string) => {
    const v = given[name];
    if (v === undefined || v === "") return false;
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw badRequest(`${name} must be true or false`);
  };
  const mode = given.mode ?? "skip";
  if (mode !== "skip" && mode !== "update") throw badRequest("mode must be skip or update");
  let mapping: Record<string, string> | undefined;
  if (given.mapping !== undefined && given.mapping !== "") {
    try {
      mapping = JSON.parse(given.mapping);
    } catch {
      throw badRequest('mapping must be a JSON object of column names to fields, e.g. {"E-mail": "email"}');
    }
    if (mapping === null || typeof mapping !== "object" || Array.isArray(mapping)) throw badRequest('mapping must be a JSON object of column names to fields, e.g. {"E-mail": "email"}');
  }
  return { mode, dryRun: flag("dry_run"), notify: flag("notify"), mapping };
}

/** A source of the file's bytes: a web stream (a request's body, Bun.file) or Node's. */
export type Source = ReadableStream<Uint8Array> | NodeJS.ReadableStream;

const parseError = (err: unknown) => {
  const e = err as { code?: string; lines?: number; message?: string };
  return badRequest(`The file is not valid CSV${e.lines ? ` at line ${e.lines}` : ""}: ${(e.message ?? String(err)).replace(/^Invalid (Record|Opening|Closing)/, "invalid $1")}`);
};

/**
 * Reads and stages the file; answers the new import (queued). A problem with the file as a whole (not CSV, no email
 * column, a mapping naming no column) is a 400 and nothing stays; a row's own problem is that row's error later.
 */
export function stageImport(
  db: Db,
  w: Waitlist,
  source: Source,
  options: ImportOptions,
  progress: { onRows?: (n: number) => void; request?: Request } = {},
): Promise<string> {
  return inBackground(() => stage(db, w, source, options, progress));
}

async function stage(db: Db, w: Waitlist, source: Source, options: ImportOptions, progress: { onRows?: (n: number) => void; request?: Request }): Promise<string> {
  const id = `imp_${sortableToken(20)}`;
  const at = now();
  const input = source instanceof ReadableStream ? Readable.fromWeb(source as import("node:stream/web").ReadableStream) : (source as Readable);
  const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true, max_record_size: 1_000_000 });
  // the file fed to the parser a piece at a time, giving way between (a body's chunk can be a megabyte: parsed in one
  // go, 12,000 rows held the event loop for ~100 ms); the parser's own back-pressure paces it to the staging
  const stop = new AbortController();
  void (async () => {
    for await (const chunk of input as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
        if (stop.signal.aborted) return;
        if (!parser.write(bytes.subarray(at, at + PIECE_BYTES))) await once(parser, "drain", { signal: stop.signal });
        await giveWay(progress.request);
      }
    }
    parser.end();
  })().catch((err: unknown) => {
    if (!stop.signal.aborted) parser.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  let headers: string[] | null = null;
  let fields: Field[] = [];
  let batch: { line: number; at: number; email: string | null; data: string; extId: string | null; extCode: string | null }[] = [];
  let rows = 0;
  // its insert holds no lock a request waits for: half of a step is rows (foreground.ts)
  const sizer = stepSizer(50, STAGE_BATCH, { holds: false });
  /** Time spent on the batch in hand: its rows read, then its insert. */
  let work = 0;
  /** Time spent reading rows since the last time the requests in hand went first. */
  let reading = 0;
  const flush = async () => {
    if (!batch.length) return;
    const started = performance.now();
    const values = batch.map((r) => sql`(${id}, ${r.line}, ${w.id}, ${r.at}, ${r.email}, ${r.data}, ${r.extId}, ${r.extCode}, ${at})`);
    // a staged row lost in a crash belongs to no import yet (its row is written last): its commit need not wait for the disk
    const insert = sql`INSERT INTO import_rows (import_id, line, waitlist_id, joined_at, email, data, ext_id, ext_code, staged_at) VALUES ${sql.join(values, sql`, `)}`;
    await db.tx((tx) => tx.exec(insert), { durable: false });
    const took = work + performance.now() - started;
    sizer.took(took);
    work = 0;
    reading = 0;
    rows += batch.length;
    batch = [];
    progress.onRows?.(rows);
    // the step's rows read and inserted took the machine while they ran: as long again is left to requests
    await rest(took, progress.request);
    await giveWay(progress.request);
  };
  try {
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        if (!headers) {
          headers = record.map((h) => h.trim());
          fields = mapColumns(headers, options.mapping);
          continue;
        }
        const started = performance.now();
        const data = readRow(record, fields, headers, at);
        // a row at the time it gives, else at the import's: rows are run in that order, then by line
        batch.push({ line: info.lines, at: data.at ?? at, email: data.error ? null : (data.email ?? null), data: JSON.stringify(data), extId: data.id ?? null, extCode: data.referral_code ?? null });
        const took = performance.now() - started;
        work += took;
        reading += took;
        if (batch.length >= sizer.size) await flush();
        else if (reading >= STEP_MS) {
          // a piece of the file is a few hundred records, read in one go: requests go first every STEP_MS of them
          reading = 0;
          await giveWay(progress.request);
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      if ((err as { code?: string }).code?.startsWith("CSV_")) throw parseError(err);
      throw err;
    }
    if (!headers) throw badRequest("The file is empty: it needs a header row and one row per subscriber");
    await flush();
    const mapping = Object.fromEntries(headers.map((h, i) => [h, fields[i]]));
    await db.exec(sql`INSERT INTO imports (id, waitlist_id, status, mode, dry_run, notify, mapping, row_count, created_at, updated_at)
      VALUES (${id}, ${w.id}, 'queued', ${options.mode}, ${options.dryRun}, ${options.notify}, ${JSON.stringify(mapping)}, ${rows}, ${at}, ${at})`);
    return id;
  } catch (err) {
    stop.abort();
    parser.destroy();
    await dropStaged(db, id).catch(() => {});
    throw err;
  }
}

/**
 * Removes an import's staged rows, a slice at a time sized by time, giving way to requests and resting while they come
 * (foreground.ts): a million rows in one statement would hold the writer for seconds. A slice lost in a crash is pruned later.
 */
export async function dropStaged(db: Db, importId: string): Promise<void> {
  const slice = (size: number) =>
    sql`DELETE FROM import_rows WHERE import_id = ${importId} AND line IN (SELECT line FROM import_rows WHERE import_id = ${importId} LIMIT ${size})`;
  // rows deleted as fast as the database takes them: the sign-ups' p99 while 200,000 were removed on PostgreSQL 28 ms,
  // 18 through the run before it; 24 with the rest (bench/README.md, 2026-12-07 (late night))
  await paced(async (size) => (await db.tx((tx) => tx.exec(slice(size)), { durable: false })).changed > 0, { first: 200, max: 5_000, rests: true });
}

/**
 * Staged rows no import will run: an upload's cut off by a crash (no import row, once they are ORPHAN_MS old), and an
 * import's that ended while its rows were being removed.
 */
export async function pruneOrphans(db: Db, at = now()): Promise<void> {
  const left = await db.rows<{ id: string }>(sql`SELECT DISTINCT import_id AS id FROM import_rows r
    WHERE (r.staged_at < ${at - ORPHAN_MS} AND NOT EXISTS (SELECT 1 FROM imports i WHERE i.id = r.import_id))
      OR EXISTS (SELECT 1 FROM imports i WHERE i.id = r.import_id AND i.status IN ('done', 'failed'))`);
  for (const { id } of left) await dropStaged(db, id);
}
