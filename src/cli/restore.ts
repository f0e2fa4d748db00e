// `waitlist restore --from FILE`: checks a backup, refuses while a server has the database open, keeps the current
// database (WAL folded in) as `<name>.before-restore-<UTC time>` and swaps the backup in with one rename (issue 17).
import { copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync, unlinkSync, chmodSync, openSync, fsyncSync, closeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { createClient } from "@libsql/client";
import { databaseSettings } from "../config";
import { databasePath, isPgUrl, SCHEMA_VERSION } from "../db/open";
import { schemaVersionOf } from "../db/sqlite/migrate";
import { clientStore } from "../db/sqlite/store";
import { contentsOf, fileStamp } from "./backup";

const PG_RESTORE = "restore is for the embedded database; on PostgreSQL restore a dump with pg_restore (e.g. pg_restore --clean -d \"$DATABASE_URL\" waitlist.dump)";
import { CommandError, type Command } from "./command";
import { runningInstances } from "./presence";

/** integrity_check, a waitlist schema, and a schema version this binary knows. */
async function checkBackup(file: string): Promise<void> {
  if (!existsSync(file)) throw new CommandError("not_found", `${file} does not exist`);
  const client = createClient({ url: `file:${file}` });
  try {
    const integrity = await client.execute("PRAGMA integrity_check").catch((err) => {
      throw new CommandError("bad_backup", `${file} is not a database: ${String((err as Error).message).split("\n")[0]}`);
    });
    const verdict = integrity.rows.map((r) => String(r[0])).join("; ");
    if (verdict !== "ok") throw new CommandError("bad_backup", `${file} failed integrity_check: ${verdict.slice(0, 200)}`);
    const tables = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'waitlists', 'subscribers')");
    if (tables.rows.length < 3) throw new CommandError("bad_backup", `${file} is not a waitlist database`);
    const version = await schemaVersionOf(client);
    if (version > SCHEMA_VERSION) throw new CommandError("schema_too_new", `${file} has schema ${version}, newer than this binary's ${SCHEMA_VERSION}: upgrade the binary`);
  } finally {
    client.close();
  }
}

/** Folds the WAL into the current database; refuses if a server (or another process holding it) is using it. */
async function quiesce(path: string): Promise<void> {
  const client = createClient({ url: `file:${path}` });
  try {
    const running = await runningInstances(clientStore(client));
    if (running.length) {
      const s = running[0];
      throw new CommandError("server_running", `a server has ${path} open (pid ${s.pid} on ${s.host}, port ${s.port}): stop it first, e.g. systemctl stop waitlist`);
    }
    const r = await client.execute("PRAGMA wal_checkpoint(TRUNCATE)").catch((err) => {
      // a damaged database is what restore is for: keep it as it is
      if (/NOTADB|CORRUPT|not a database|malformed/i.test(`${(err as any)?.code} ${(err as Error)?.message}`)) return null;
      throw err;
    });
    if (r && Number(r.rows[0]?.[0] ?? 0) !== 0) throw new CommandError("database_busy", `another process is using ${path}: stop it first`);
  } finally {
    client.close();
  }
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) throw new CommandError("database_busy", `another process is writing ${path}: stop it first`);
}

export const restoreCommand: Command = {
  name: "restore",
  summary: "replace the embedded database with a backup (server stopped), keeping the current one beside it",
  flags: [{ name: "from", value: "FILE", help: "the backup to restore" }],
  required: ["from"],
  async run({ flags, env }) {
    const from = resolve(flags.get("from")!.trim());
    const settings = databaseSettings(env, flags);
    const rel = databasePath(settings.url);
    if (isPgUrl(settings.url)) throw new CommandError("unsupported", PG_RESTORE);
    if (!rel) throw new CommandError("unsupported", "restore works on an embedded (file:) database");
    const path = resolve(rel);
    if (from === path) throw new CommandError("same_file", `${from} is the live database itself`);
    await checkBackup(from);
    const hadDatabase = existsSync(path);
    let kept: string | null = null;
    if (hadDatabase) {
      await quiesce(path);
      kept = join(dirname(path), `${basename(path)}.before-restore-${fileStamp()}`);
    }
    const createdDir = !existsSync(dirname(path));
    mkdirSync(dirname(path), { recursive: true });
    // copy beside the target first (same file system), flushed, so the swap below is one atomic rename
    const incoming = `${path}.restoring-${process.pid}`;
    try {
      copyFileSync(from, incoming);
      chmodSync(incoming, 0o600);
      const fd = openSync(incoming, "r+");
      fsyncSync(fd);
      closeSync(fd);
      if (kept) linkSync(path, kept); // the current database stays reachable under its new name
      renameSync(incoming, path);
    } catch (err) {
      rmSync(incoming, { force: true });
      if (kept && existsSync(kept) && existsSync(path)) unlinkSync(kept);
      if (createdDir) rmSync(dirname(path), { recursive: true, force: true });
      throw err;
    }
    // the emptied WAL and the shared-memory index belonged to the old file
    for (const stale of [`${path}-wal`, `${path}-shm`]) rmSync(stale, { force: true });
    const held = await contentsOf(path);
    return {
      json: { restored: path, from, kept, ...held },
      text: `restored ${from} to ${path}: ${held.waitlists} waitlists, ${held.subscribers} subscribers, ${held.bytes} bytes` + (kept ? `\nthe previous database is kept as ${kept}` : ""),
    };
  },
};
