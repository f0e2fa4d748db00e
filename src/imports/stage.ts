// Issue 47: an import's first step: the CSV read as it streams in (csv-parse), each record mapped and staged in
// import_rows 500 at a time, in constant memory; the import's row is written last, so an upload that breaks off (a bad
// quote, a dropped connection, a crash) leaves no import, and its staged rows are removed (or pruned).
import { Readable } from "node:stream";
import { parse } from "csv-parse";
import { sql } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { AppError, badRequest } from "../http/errors";
import { mapColumns, readRow, type Field } from "./mapping";

const STAGE_BATCH = 500;
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
export async function stageImport(db: Db, w: Waitlist, source: Source, options: ImportOptions, onRows?: (n: number) => void): Promise<string> {
  const id = `imp_${sortableToken(20)}`;
  const at = now();
  const input = source instanceof ReadableStream ? Readable.fromWeb(source as import("node:stream/web").ReadableStream) : (source as Readable);
  const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true, max_record_size: 1_000_000 });
  input.on("error", (err) => parser.destroy(err));
  input.pipe(parser);
  let headers: string[] | null = null;
  let fields: Field[] = [];
  let batch: { line: number; at: number; email: string | null; data: string; extId: string | null; extCode: string | null }[] = [];
  let rows = 0;
  const flush = async () => {
    if (!batch.length) return;
    const values = batch.map((r) => sql`(${id}, ${r.line}, ${w.id}, ${r.at}, ${r.email}, ${r.data}, ${r.extId}, ${r.extCode}, ${at})`);
    await db.exec(sql`INSERT INTO import_rows (import_id, line, waitlist_id, joined_at, email, data, ext_id, ext_code, staged_at) VALUES ${sql.join(values, sql`, `)}`);
    rows += batch.length;
    batch = [];
    onRows?.(rows);
  };
  try {
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        if (!headers) {
          headers = record.map((h) => h.trim());
          fields = mapColumns(headers, options.mapping);
          continue;
        }
        const data = readRow(record, fields, headers, at);
        // a row at the time it gives, else at the import's: rows are run in that order, then by line
        batch.push({ line: info.lines, at: data.at ?? at, email: data.error ? null : (data.email ?? null), data: JSON.stringify(data), extId: data.id ?? null, extCode: data.referral_code ?? null });
        if (batch.length >= STAGE_BATCH) await flush();
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
    input.unpipe?.(parser);
    parser.destroy();
    await dropStaged(db, id).catch(() => {});
    throw err;
  }
}

/** Removes an import's staged rows, a slice at a time (a million rows in one statement would hold the writer long). */
export async function dropStaged(db: Db, importId: string): Promise<void> {
  for (;;) {
    const n = await db.exec(sql`DELETE FROM import_rows WHERE import_id = ${importId} AND line IN (SELECT line FROM import_rows WHERE import_id = ${importId} LIMIT 5000)`);
    if (n.changed === 0) return;
  }
}

/** Staged rows whose upload never became an import (cut off by a crash), once they are ORPHAN_MS old. */
export const pruneOrphans = (db: Db, at = now()) =>
  db.exec(sql`DELETE FROM import_rows WHERE staged_at < ${at - ORPHAN_MS} AND NOT EXISTS (SELECT 1 FROM imports i WHERE i.id = import_rows.import_id)`);
