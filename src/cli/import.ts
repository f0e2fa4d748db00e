// `waitlist import --waitlist KEY FILE.csv` and `waitlist export --waitlist KEY --format csv|jsonl` (issue 47): the API's
// import and export run from the shell against the database, while a server runs too (the import's lease keeps one
// runner at a time: a server that takes it over finishes it, and this command reports it).
import { existsSync } from "node:fs";
import { sql } from "drizzle-orm";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { importView } from "../imports/routes";
import { processImport } from "../imports/run";
import { importOptions, stageImport } from "../imports/stage";
import { exportSubscribers } from "../subscribers/export";
import { loadConfig } from "../config";
import { CommandError, type Command } from "./command";
import { UsageError } from "./args";

async function waitlistOf(db: Db, key: string): Promise<Waitlist> {
  const [w] = await db.select().from(db.t.waitlists).where(sql`key = ${key.trim()}`);
  if (!w) throw new CommandError("not_found", `no waitlist with key ${key.trim()}`);
  return w;
}

const n = (v: number) => v.toLocaleString("en");

/** A progress line on a terminal (stderr), rewritten in place; nothing when stderr is not a terminal. */
function progress(): { show: (text: string) => void; done: () => void } {
  const tty = Boolean(process.stderr.isTTY);
  let last = 0;
  return {
    show(text) {
      if (!tty || Date.now() - last < 100) return;
      last = Date.now();
      process.stderr.write(`\r\x1b[2K${text}`);
    },
    done() {
      if (tty) process.stderr.write("\r\x1b[2K");
    },
  };
}

const bar = (part: number, whole: number) => {
  const f = whole > 0 ? Math.min(1, part / whole) : 1;
  const filled = Math.round(f * 30);
  return `[${"#".repeat(filled)}${".".repeat(30 - filled)}] ${Math.floor(f * 100)}%`;
};

export const importCommand: Command = {
  name: "import",
  summary: "import subscribers from a CSV file (columns detected from the header; see README)",
  positional: { name: "file", value: "FILE.csv", help: "the CSV file, with a header row" },
  flags: [
    { name: "waitlist", value: "WAITLIST_KEY", help: "the waitlist's key" },
    { name: "mapping", value: "JSON", help: 'column -> field over the detected ones, e.g. {"E-mail":"email","Notes":"ignore"}' },
    { name: "mode", value: "M", help: "an email already on the list: skip or update", fallback: "skip" },
    { name: "dry-run", help: "check and count everything, change nothing" },
    { name: "notify", help: "send welcome emails and subscriber.created webhooks for the rows created" },
  ],
  required: ["waitlist", "file"],
  async run({ flags, db }) {
    const path = flags.get("file")!;
    if (!existsSync(path)) throw new UsageError(`no such file: ${path}`, importCommand);
    const options = importOptions({ mode: flags.get("mode"), dry_run: flags.get("dry-run"), notify: flags.get("notify"), mapping: flags.get("mapping") });
    const database = await db();
    const w = await waitlistOf(database, flags.get("waitlist")!);
    const bar_ = progress();
    const id = await stageImport(database, w, Bun.file(path).stream(), options, { onRows: (rows) => bar_.show(`reading ${path}: ${n(rows)} rows`) });
    for (;;) {
      const state = await processImport(database, id, 500);
      const view = (await importView(database, w.id, id))!;
      const runDone = view.created + view.updated + view.skipped + view.invalid;
      bar_.show(`${bar(runDone, view.rows)} ${n(runDone)}/${n(view.rows)} rows`);
      if (view.status === "done" || view.status === "failed") break;
      // another runner (a server's job) holds it: wait for it
      if (state === "busy") await Bun.sleep(500);
    }
    bar_.done();
    const view = (await importView(database, w.id, id))!;
    const first = view.errors.slice(0, 5).map((e) => `\n  line ${e.line}: ${e.message}`).join("");
    const text =
      `${view.dry_run ? "dry run of " : ""}import ${view.id} into ${w.key}: ${view.status}; ${n(view.rows)} rows: ${n(view.created)} created, ` +
      `${n(view.updated)} updated, ${n(view.skipped)} skipped, ${n(view.invalid)} invalid${first}${view.errors.length > 5 ? `\n  ... ${n(view.errors.length - 5)} more (--json lists up to 1,000)` : ""}`;
    return { json: { ...view, import: view }, text, exitCode: view.status === "failed" ? 1 : 0 };
  },
};

export const exportCommand: Command = {
  name: "export",
  summary: "write a waitlist's subscribers, every field, to stdout as CSV or JSON Lines",
  flags: [
    { name: "waitlist", value: "WAITLIST_KEY", help: "the waitlist's key" },
    { name: "format", value: "F", help: "csv or jsonl", fallback: "csv" },
  ],
  required: ["waitlist"],
  async run({ flags, db, env }) {
    const format = flags.get("format") ?? "csv";
    if (format !== "csv" && format !== "jsonl") throw new UsageError(`--format must be csv or jsonl, got "${format}"`, exportCommand);
    const database = await db();
    const w = await waitlistOf(database, flags.get("waitlist")!);
    // the links in it (thank_you_url) as the server builds them: BASE_URL, else localhost on PORT
    const { baseUrl } = loadConfig(env, new Map(), ["baseUrl", "port"]);
    const stream = await exportSubscribers(database, w, format, {}, baseUrl);
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once("drain", r));
    }
    return { json: {}, text: "", written: true };
  },
};
