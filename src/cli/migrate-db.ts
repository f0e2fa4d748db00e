// `waitlist migrate-db --from URL --to URL [--force]` (issue 18 item 5): copies every table from one database to
// another, either engine to either, with servers on both stopped; a thin wrapper over db/copy.ts, which verifies the
// row counts. The target is migrated to this binary's schema first and must be empty unless --force empties it.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { databasePath, displayUrl, isPgUrl, openDatabase, removeCreatedFiles, type Db } from "../db/open";
import { copyDatabase, countRows, emptyAll, type CopyProgress } from "../db/copy";
import { CommandError, type Command } from "./command";
import { runningInstances } from "./presence";

/** Where a URL points, without credentials or options: two spellings of one database compare equal. */
function identity(url: string): string {
  const path = databasePath(url);
  if (path) return `file:${resolve(path)}`;
  const u = new URL(url);
  return `pg://${u.hostname.toLowerCase()}:${u.port || "5432"}${decodeURIComponent(u.pathname) || "/"}`;
}

function checkUrl(flag: string, url: string): void {
  if (isPgUrl(url)) return;
  if (!databasePath(url)) throw new CommandError("usage", `--${flag} must be a file: path or a postgres:// URL, got ${displayUrl(url)}`);
}

/** A progress bar on stderr, only when it is a terminal (stdout carries the result alone). */
function progressBar(): { update(p: CopyProgress): void; done(): void } {
  if (!process.stderr.isTTY) return { update() {}, done() {} };
  let last = 0;
  let shown = false;
  return {
    update(p) {
      const at = Date.now();
      if (at - last < 100 && p.copied < p.total) return;
      last = at;
      const share = p.total ? Math.min(1, p.copied / p.total) : 1;
      const width = 30;
      const filled = Math.round(share * width);
      process.stderr.write(`\r\x1b[K${p.table.padEnd(20)} [${"#".repeat(filled)}${" ".repeat(width - filled)}] ${p.copied}/${p.total}`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\r\x1b[K");
    },
  };
}

async function refuseRunningServer(db: Db, url: string): Promise<void> {
  const [s] = await runningInstances(db);
  if (s) throw new CommandError("server_running", `a server is using ${displayUrl(url)} (pid ${s.pid} on ${s.host}, port ${s.port}): stop it first`);
}

const oneLine = (err: unknown) => String((err as Error)?.message ?? err).split("\n")[0];

export const migrateDbCommand: Command = {
  name: "migrate-db",
  summary: "copy a database to another (embedded <-> PostgreSQL) with servers stopped, row counts verified",
  flags: [
    { name: "from", value: "URL", help: "the database to copy (file: or postgres://)" },
    { name: "to", value: "URL", help: "the database to fill, created or migrated to this binary's schema (file: or postgres://)" },
    { name: "force", help: "empty a target that already holds rows, then copy" },
  ],
  required: ["from", "to"],
  ownDatabases: true,
  async run({ flags, env }) {
    const from = flags.get("from")!.trim();
    const to = flags.get("to")!.trim();
    checkUrl("from", from);
    checkUrl("to", to);
    if (identity(from) === identity(to)) throw new CommandError("same_database", `--from and --to are the same database (${displayUrl(from)})`);
    const fromPath = databasePath(from);
    if (fromPath && !existsSync(fromPath)) throw new CommandError("not_found", `${resolve(fromPath)} does not exist`);
    const asked = Number(flags.get("database-pool-size") ?? env.DATABASE_POOL_SIZE);
    const poolSize = Number.isInteger(asked) && asked > 0 ? asked : 4;
    let source: Db | undefined;
    let target: Db | undefined;
    let ok = false;
    const bar = progressBar();
    try {
      source = await openDatabase({ url: from, poolSize });
      target = await openDatabase({ url: to, poolSize });
      await refuseRunningServer(source, from);
      await refuseRunningServer(target, to);
      const held = Object.entries(await countRows(target)).filter(([, n]) => n > 0);
      if (held.length && flags.get("force") !== "true") {
        const rows = held.reduce((a, [, n]) => a + n, 0);
        throw new CommandError("not_empty", `${displayUrl(to)} already holds ${rows} rows (${held.map(([t, n]) => `${t} ${n}`).join(", ")}): choose an empty database or add --force to empty it first`);
      }
      if (held.length) await emptyAll(target);
      const result = await copyDatabase(source, target, { onProgress: (p) => bar.update(p) }).catch((err) => {
        throw new CommandError("copy_failed", `the copy to ${displayUrl(to)} failed: ${oneLine(err)}`);
      });
      bar.done();
      ok = true;
      const width = Math.max(...Object.keys(result.tables).map((t) => t.length)) + 2;
      return {
        json: { from: displayUrl(from), to: displayUrl(to), emptied: held.length > 0, tables: result.tables, rows: result.rows },
        text: [
          ...Object.entries(result.tables).map(([t, n]) => `${t.padEnd(width)}${n}`),
          `copied ${result.rows} rows from ${displayUrl(from)} to ${displayUrl(to)}; row counts verified`,
        ].join("\n"),
      };
    } catch (err) {
      bar.done();
      throw err;
    } finally {
      await source?.close().catch(() => {});
      await target?.close().catch(() => {});
      // a target file this command created is removed again when it fails (DESIGN §3: nothing created on failure)
      if (!ok && target) removeCreatedFiles(target);
    }
  },
};
