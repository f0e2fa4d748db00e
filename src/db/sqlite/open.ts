// Opens the embedded libSQL database: the file and its folder, the pragmas of every connection, the embedded
// migrations, and the Db over it (group commit, change stamp, own commits, upkeep).
import { chmodSync, existsSync, mkdirSync, rmdirSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import type { Db, TxOptions } from "../db";
import { DatabaseOpenError } from "../errors";
import * as schema from "../schema";
import { timed, type Timing } from "../timing";
import { databasePath, displayUrl } from "../url";
import { changeProbe, oncePerTurn } from "./change-stamp";
import { checkpointer, WAL_LIMIT } from "./checkpointer";
import { fileWriter } from "./file-writer";
import { createGroupWriter, routeWrites, type GroupWriter } from "./group-writer";
import { checkpoint, compactDatabase, fileSizes } from "./maintenance";
import { applyMigrations } from "./migrate";
import { ownCommits } from "./own-commits";
import { cacheStatements, onEveryConnection } from "./statement-cache";
import { fileTransactions, sqliteStore, sqliteTx } from "./store";

/** The embedded Db with what only it has: for the CLI's file commands (backup) and the tests. */
export type SqliteDb = Db & {
  /** The libSQL client (backup, restore, doctor, compaction). */
  readonly $client: Client;
  /** The group commit behind `write`. */
  readonly $writer: GroupWriter;
};

const BUSY_TIMEOUT_MS = 5_000;

/**
 * The database file, its WAL and index, and the folders above it, when the file does not exist yet: removed again
 * if the command that creates them fails. An existing database's WAL is never listed (a server may be using it).
 */
function missingPaths(path: string): string[] {
  if (existsSync(path)) return [];
  const missing = [path, `${path}-wal`, `${path}-shm`];
  for (let dir = dirname(resolve(path)); !existsSync(dir); dir = dirname(dir)) missing.push(dir);
  return missing;
}

/** Removes the files and folders this process created while opening `db` (after a failed command). */
export function removeCreatedFiles(db: Pick<Db, "$created">): void {
  removePaths(db.$created);
}

/** Files first, then folders deepest first (the order missingPaths lists them); a folder someone else filled stays. */
function removePaths(paths: string[]): void {
  for (const p of paths) {
    try {
      rmSync(p, { force: true });
    } catch {
      try {
        rmdirSync(p);
      } catch {}
    }
  }
}
export async function openSqliteDb(settings: { url: string; sync?: "full" | "normal"; warn?: (message: string, fields?: Record<string, unknown>) => void }): Promise<SqliteDb> {
  const path = databasePath(settings.url);
  const isFile = settings.url.startsWith("file:");
  const created = path ? missingPaths(path) : [];
  let client: Client | undefined;
  let forget: (() => unknown) | undefined;
  try {
    if (isFile) {
      cacheStatements();
      // the data folder holds every subscriber's email: the service's user alone reads it
      if (path) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    }
    // per connection, each one the driver's pool opens: synchronous FULL (the default): an acknowledged write survives
    // power loss; NORMAL (DATABASE_SYNC=normal) survives a crash of the process but not of the machine. No automatic
    // checkpoints: the checkpointer runs them off the writers' path (checkpointer.ts)
    if (path) forget = onEveryConnection(path, `PRAGMA foreign_keys = ON; PRAGMA synchronous = ${settings.sync === "normal" ? "NORMAL" : "FULL"}; PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${WAL_LIMIT};`);
    client = createClient({ url: settings.url, timeout: BUSY_TIMEOUT_MS });
    if (isFile) {
      // WAL (kept in the file) lets the CLI and several instances share one file; busy_timeout (set per connection
      // by the driver's `timeout`) waits out writers instead of failing
      await client.execute("PRAGMA journal_mode = WAL");
      // a new database file is the service user's alone; SQLite gives its WAL and index the same mode
      if (path && created.includes(path)) chmodSync(path, 0o600);
    }
    await applyMigrations(client, isFile);
  } catch (err) {
    client?.close();
    forget?.();
    removePaths(created);
    throw explainOpenFailure(err, settings.url, path);
  }
  const probe = path ? changeProbe(path) : null;
  const turn = probe ? oncePerTurn(probe.stamp) : null;
  // the group commit knows its own commits by their stamps; only the WAL index's stamps count transactions
  const observe = probe?.counts ? { stamp: probe.stamp, commits: ownCommits() } : undefined;
  // a file's group commits run on a connection of their own; an in-memory database has only the client's
  const file = path ? fileWriter(path, BUSY_TIMEOUT_MS) : undefined;
  // the writers, created below, are held by a checkpoint once the WAL is past its limit (checkpointer.ts)
  let writer: GroupWriter | undefined;
  const checkpoints = path ? checkpointer(path, BUSY_TIMEOUT_MS, settings.warn, (fn) => writer!.exclusive(fn)) : undefined;
  const written = () => {
    turn?.forget();
    checkpoints?.written();
  };
  writer = createGroupWriter(client, { observe, written, file });
  const timing: Timing = { hook: null };
  routeWrites(client, writer);
  timeClient(client, timing);
  const store = sqliteStore(client, writer);
  // a file's group commits run past the client: timed as the Store's writes (in memory they are the client's transactions)
  if (path) store.write = timed(timing, "batch", store.write);
  const upkeep = { client, writer, path };
  const opened = client;
  const builder = drizzle(client, { schema });
  const inFileTx = file ? fileTransactions(schema) : null;
  const db: SqliteDb = Object.assign(builder, store, {
    t: schema as unknown as Db["t"],
    changeStamp: turn?.read ?? (() => null),
    ownCommits: observe?.commits ?? null,
    checkpoint: () => (checkpoints ? checkpoints.alone(() => checkpoint(upkeep)) : checkpoint(upkeep)),
    compact: () => (checkpoints ? checkpoints.alone(() => compactDatabase(upkeep)) : compactDatabase(upkeep)),
    size: async () => {
      if (!path) return null;
      const sizes = fileSizes(path);
      return { bytes: sizes.fileBytes, walBytes: sizes.walBytes };
    },
    onTiming: (hook: Timing["hook"]) => void (timing.hook = hook),
    close: async () => {
      await checkpoints?.close();
      await file?.close();
      probe?.close();
      opened.close();
      forget?.();
    },
    // IMMEDIATE: the write lock is taken at the start, so what the transaction reads stays true until it commits; a
    // file's on its writer connection (store.ts fileTransactions), an in-memory database's on the client's
    tx: <T>(fn: (tx: Db) => Promise<T>, options?: TxOptions) =>
      writer.exclusive(() =>
        file && inFileTx
          ? file.interactive(inFileTx(fn, db), options)
          : builder.transaction((raw) => fn(sqliteTx(raw, db)), { behavior: "immediate" }),
      ),
    $client: client,
    $writer: writer,
    $path: path,
    $created: created,
  }) as unknown as SqliteDb;
  return db;
}

/** The client's calls timed for the hook (execute: the builder's queries and the Store's reads; batch; transactions). */
function timeClient(client: Client, timing: Timing): void {
  client.execute = timed(timing, "execute", client.execute.bind(client) as (...args: unknown[]) => Promise<never>) as Client["execute"];
  client.batch = timed(timing, "batch", client.batch.bind(client) as (...args: unknown[]) => Promise<never>) as Client["batch"];
  const transaction = client.transaction.bind(client);
  client.transaction = (async (...args: Parameters<Client["transaction"]>) => {
    const hook = timing.hook;
    const at = performance.now();
    const t = await transaction(...args);
    if (!hook) return t;
    const close = t.close.bind(t);
    t.close = () => {
      close();
      hook("transaction", (performance.now() - at) / 1000);
    };
    return t;
  }) as Client["transaction"];
}

function explainOpenFailure(err: unknown, url: string, path: string | null): unknown {
  if (err instanceof DatabaseOpenError) return err;
  const e = err as { code?: string; message?: string };
  const why = String(e?.message ?? err).split("\n")[0];
  if (!path) return new DatabaseOpenError("database_unreachable", `cannot reach the database server at ${displayUrl(url)}: ${why}`);
  if (/NOTADB|CORRUPT/.test(`${e?.code} ${why}`) || /not a database|malformed/i.test(why)) {
    return new DatabaseOpenError("database_corrupt", `${path} is not a usable database (${why}): restore a backup with \`waitlist restore --from FILE\``);
  }
  if (/EACCES|EPERM|ENOTDIR|EROFS|EEXIST|CANTOPEN|READONLY|PERM/.test(`${e?.code} ${why}`)) {
    return new DatabaseOpenError("database_unwritable", `cannot create or write the database ${path}: ${why}`);
  }
  return err;
}
