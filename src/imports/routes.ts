// Issue 47: POST .../subscribers/import (a CSV as text/csv or a multipart file, streamed, staged, then run as a job) and
// GET .../imports/{id} (its progress and its problems by line).
import { Readable } from "node:stream";
import busboy from "busboy";
import { Elysia, t } from "elysia";
import { sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard, Waitlist } from "../http/api";
import { cappedStream, IMPORT_MAX_BYTES, UPLOAD_IDLE_S } from "../http/body-limit";
import { errorResponses } from "../http/error-schemas";
import { AppError, badRequest, notFound } from "../http/errors";
import { processImport } from "./run";
import { importOptions, stageImport, type Source } from "./stage";

export const ImportView = t.Object({
  id: t.String(),
  status: t.Union([t.Literal("queued"), t.Literal("running"), t.Literal("done"), t.Literal("failed")]),
  mode: t.Union([t.Literal("skip"), t.Literal("update")]),
  dry_run: t.Boolean(),
  notify: t.Boolean(),
  mapping: t.Record(t.String(), t.String(), { description: "Each column of the file and the field it went to (ignore: not imported)" }),
  rows: t.Number({ description: "Rows in the file, the header not counted" }),
  created: t.Number(),
  updated: t.Number(),
  skipped: t.Number(),
  invalid: t.Number(),
  errors: t.Array(t.Object({ line: t.Number({ description: "The file's line; the header is line 1" }), message: t.String() }), { description: "The first 1,000 problems" }),
  failure: t.Union([t.String(), t.Null()], { description: "Why a failed import stopped" }),
  created_at: t.Number(),
  finished_at: t.Union([t.Number(), t.Null()]),
});
export type ImportViewType = typeof ImportView.static;

interface Row {
  id: string;
  status: "queued" | "running" | "done" | "failed";
  mode: "skip" | "update";
  dry_run: boolean | number;
  notify: boolean | number;
  mapping: string;
  row_count: number;
  created: number;
  updated: number;
  skipped: number;
  invalid: number;
  errors: string;
  failure: string | null;
  created_at: number;
  finished_at: number | null;
}

export async function importView(db: Db, waitlistId: string, id: string): Promise<ImportViewType | null> {
  const [r] = await db.rows<Row>(sql`SELECT * FROM imports WHERE id = ${id} AND waitlist_id = ${waitlistId}`);
  if (!r) return null;
  return {
    id: r.id,
    status: r.status,
    mode: r.mode,
    dry_run: Boolean(r.dry_run),
    notify: Boolean(r.notify),
    mapping: JSON.parse(r.mapping),
    rows: Number(r.row_count),
    created: Number(r.created),
    updated: Number(r.updated),
    skipped: Number(r.skipped),
    invalid: Number(r.invalid),
    errors: JSON.parse(r.errors),
    failure: r.failure,
    created_at: Number(r.created_at),
    finished_at: r.finished_at === null ? null : Number(r.finished_at),
  };
}

/** A multipart body's option fields (those before the file) and its file part, as it streams. */
function multipartFile(request: Request): Promise<{ fields: Record<string, string>; file: Readable }> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: Object.fromEntries(request.headers), limits: { files: 1, fields: 20, fieldSize: 100_000, fileSize: IMPORT_MAX_BYTES } });
    } catch {
      return reject(badRequest("The multipart body has no boundary"));
    }
    const fields: Record<string, string> = {};
    bb.on("field", (name, value) => {
      fields[name] = value;
    });
    bb.on("file", (_name, file) => {
      file.on("limit", () => file.destroy(new AppError("payload_too_large", `The file is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MB`)));
      resolve({ fields, file });
    });
    bb.on("error", () => reject(badRequest("The multipart body is malformed")));
    bb.on("close", () => reject(badRequest("The form has no file: send the CSV as a file field, after the option fields")));
    Readable.fromWeb(request.body as import("node:stream/web").ReadableStream).pipe(bb);
  });
}

const OPTIONS = ["mode", "dry_run", "notify", "mapping"];

export function importRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard> }) {
  const { db } = deps;
  const policy = { key: "any", bucket: "subscribers", minPlan: "growth" } as const;
  const params = t.Object({ waitlistKey: t.String() });
  return new Elysia({ name: "imports/routes", prefix: "/api/v1/waitlist/:waitlistKey" })
    .use(deps.api)
    .post(
      "/subscribers/import",
      async ({ auth, request, query, set, server }) => {
        const w = auth.waitlist! as Waitlist;
        server?.timeout(request, UPLOAD_IDLE_S);
        const given = query as Record<string, string>;
        const unknown = Object.keys(given).find((k) => !OPTIONS.includes(k));
        if (unknown) throw badRequest(`Unknown query parameter "${unknown}"; allowed: ${OPTIONS.join(", ")}`);
        const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
        if (!request.body) throw badRequest("The body is empty: send the CSV as text/csv, or as a file field of multipart/form-data");
        let source: Source;
        let options;
        if (type === "multipart/form-data") {
          const { fields, file } = await multipartFile(request);
          options = importOptions({ ...given, ...fields });
          source = file;
        } else if (type === "text/csv" || type === "application/csv" || type === "text/plain") {
          options = importOptions(given);
          source = cappedStream(request.body);
        } else throw new AppError("unsupported_media_type", "Send the CSV as text/csv, or as a file field of multipart/form-data (the options as fields before it)");
        const id = await stageImport(db, w, source, options, { request });
        // started here at once; the imports job of any instance takes it over if this one stops
        void processImport(db, id, 10_000).catch(() => {});
        set.status = 202;
        return { success: true, data: { import: (await importView(db, w.id, id))! } };
      },
      {
        api: policy,
        params,
        query: t.Object(
          {
            mode: t.Optional(t.Union([t.Literal("skip"), t.Literal("update")], { description: "An email already on the list: skip (default) or update its name, phone, metadata and tags" })),
            dry_run: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "true: check and count everything, change nothing" })),
            notify: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "true: welcome emails and subscriber.created webhooks for the rows created (default: none)" })),
            mapping: t.Optional(t.String({ maxLength: 4_000, description: 'JSON: column -> field, over the detected mapping, e.g. {"E-mail": "email", "Plan": "metadata.plan", "Notes": "ignore"}' })),
          },
          { additionalProperties: false },
        ),
        response: { 202: t.Object({ success: t.Boolean(), data: t.Object({ import: ImportView }) }), ...errorResponses(400, 401, 403, 413, 415, 429) },
        detail: {
          tags: ["Subscribers"],
          summary: "Import a CSV (extension)",
          description:
            "The file streams in (text/csv, or multipart/form-data with the options as fields before the file part), up to 1 GB; 202 once it is read, then a job runs it (GET .../imports/{id}). Columns are matched to fields by their header, ignoring case, spaces and underscores: our export's, a Mailchimp audience export's (Email Address, First Name, Last Name, OPTIN_TIME, TAGS), Viral Loops' (email, firstname, lastname, id, referrerId, referralCount) and Prefinery's (email, status, applied at); any other column goes to metadata; mapping overrides. Rows join in signed-up order; referral codes are kept, and referrals between rows (referred_by a code, or referrerId an id of the file) are credited. A file without an email column, or that is not CSV, is a 400 and nothing is imported; a row's own problem is reported by its line. No email or webhook unless notify=true.",
          requestBody: {
            content: {
              "text/csv": { schema: { type: "string" } },
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["file"],
                  properties: { mode: { type: "string" }, dry_run: { type: "string" }, notify: { type: "string" }, mapping: { type: "string" }, file: { type: "string", format: "binary" } },
                },
              },
            },
          },
        } as any,
      },
    )
    .get(
      "/imports/:id",
      async ({ auth, params }) => {
        const view = await importView(db, auth.waitlist!.id, params.id);
        if (!view) throw notFound("Import not found");
        return { success: true, data: { import: view } };
      },
      {
        api: policy,
        params: t.Object({ waitlistKey: t.String(), id: t.String() }),
        response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ import: ImportView }) }), ...errorResponses(401, 403, 404, 429) },
        detail: { tags: ["Subscribers"], summary: "An import's progress (extension)", description: "queued, running, done or failed, with its counts and the first 1,000 problems by line." },
      },
    );
}
