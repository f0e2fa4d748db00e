// Opens the libSQL database (embedded file or server), sets the pragmas, applies the embedded migrations.
import { chmodSync, existsSync, fstatSync, mkdirSync, openSync, readSync, rmdirSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createClient, type Client, type InStatement } from "@libsql/client";
import { SQL as DrizzleSQL, StringChunk, type SQL } from "drizzle-orm";
import { createGroupWriter, routeWrites, type GroupWriter } from "./group-commit";
import { ownCommits } from "./own-commits";
import { drizzle } from "drizzle-orm/libsql";
import type { ChangeStamp, Db } from "./db";
import { sqliteDialect } from "./dialect";
import { sqliteStore } from "./sqlite-store";
import { migrations } from "./migrations.gen";
import { sequentialWrite } from "./db";
import * as schema from "./schema";
import { cacheStatements, onEveryConnection } from "./statement-cache";
import { filledOf } from "./template";
import { fileWriter } from "./file-writer";
import Database from "libsql";

export type { Db } from "./db";

const UNUSUAL = Symbol("unusual chunk");

/**
 * A drizzle `sql` fragment as a libSQL statement (for the group writer). Our raw statements hold
 * only text, values and nested fragments, which this flattens directly (drizzle's general builder
 * was ~8% of a sign-up); anything else (columns, tables, placeholders) goes through drizzle.
 */
export const toStatement = (db: Db, query: SQL): InStatement => {
  const filled = filledOf(query);
  if (filled) {
    const statement = { sql: filled.text, args: filled.args as any[] };
    // the file writer steps it once, and merges a run of one INSERT template's rows (file-writer.ts); other engines
    // see a plain statement
    if (filled.oneRow) Object.assign(statement, { oneRow: true });
    return filled.rows ? Object.assign(statement, { rows: filled.rows }) : statement;
  }
  const parts: string[] = [];
  const args: any[] = [];
  const walk = (chunks: unknown[]) => {
    for (const chunk of chunks) {
      if (chunk instanceof StringChunk) parts.push(...chunk.value);
      else if (chunk instanceof DrizzleSQL) walk(chunk.queryChunks);
      else if (chunk === undefined) continue;
      else if (chunk === null || typeof chunk !== "object") {
        parts.push("?");
        args.push(chunk);
      } else throw UNUSUAL;
    }
  };
  try {
    walk(query.queryChunks);
    return { sql: parts.join(""), args };
  } catch (err) {
    if (err !== UNUSUAL) throw err;
    const { sql: text, params } = (db as any).dialect.sqlToQuery(query);
    return { sql: text, args: params };
  }
};

export interface DbSettings {
  url: string;
  /** PostgreSQL connections. */
  poolSize?: number;
  sync?: "full" | "normal";
}

/** Why a database could not be opened: one line an operator can act on (DESIGN §3: exit 2, no stack). */
export class DatabaseOpenError extends Error {
  constructor(
    readonly code: "database_unwritable" | "database_corrupt" | "database_unreachable" | "schema_too_new",
    message: string,
  ) {
    super(message);
  }
}

const BUSY_TIMEOUT_MS = 5_000;
/** The binary's schema version: one per embedded migration; recorded in the database as PRAGMA user_version. */
export const SCHEMA_VERSION = migrations.length;

/** The file of an embedded database URL (`file:./data/w.db` -> `./data/w.db`), or null for a server. */
export function databasePath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = url.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "").replace(/\?.*$/, "");
  return path && path !== ":memory:" ? path : null;
}

/** Whether a database URL names a PostgreSQL server (the rest: libSQL). */
export const isPgUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/** A URL fit for a message: no user, password or query (which may carry a token). */
export const displayUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//").replace(/\?.*$/, "");

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

export async function openDatabase(settings: DbSettings & { statementTimeoutMs?: number }): Promise<Db> {
  // PostgreSQL's driver and schema are loaded only for a PostgreSQL URL (a command on a file starts sooner)
  if (isPgUrl(settings.url)) return (await import("./pg")).openPgDb({ url: settings.url, poolSize: settings.poolSize ?? 10, statementTimeoutMs: settings.statementTimeoutMs ?? 30_000 });
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
    // power loss; NORMAL (DATABASE_SYNC=normal) survives a crash of the process but not of the machine
    if (path) forget = onEveryConnection(path, `PRAGMA foreign_keys = ON; PRAGMA synchronous = ${settings.sync === "normal" ? "NORMAL" : "FULL"};`);
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
  const db = drizzle(client, { schema }) as Db;
  const probe = path ? changeProbe(path) : null;
  const turn = probe ? oncePerTurn(probe.stamp) : null;
  // the group commit knows its own commits by their stamps; only the WAL index's stamps count transactions
  const observe = probe?.counts ? { stamp: probe.stamp, commits: ownCommits() } : undefined;
  // a file's group commits run on a connection of their own; an in-memory database has only the client's
  const file = path ? fileWriter(path, BUSY_TIMEOUT_MS) : undefined;
  db.$writer = createGroupWriter(client, { observe, written: turn?.forget, file });
  routeWrites(client, db.$writer);
  db.$path = path;
  db.$created = created;
  const opened = client;
  return Object.assign(db, sqliteStore(db), {
    t: schema,
    changeStamp: turn?.read ?? (() => null),
    ownCommits: observe?.commits ?? null,
    close: async () => {
      await file?.close();
      probe?.close();
      opened.close();
      forget?.();
    },
    // IMMEDIATE: the write lock is taken at the start, so what the transaction reads stays true until it commits
    tx: <T>(fn: (tx: Db) => Promise<T>) =>
      db.$writer.exclusive(() => db.transaction((raw) => fn(sqliteTx(raw as unknown as Db, db)), { behavior: "immediate" })),
  });
}

/**
 * The stamp read at most once per event-loop turn (a pread each was 7% of a published page's time): what another
 * instance commits is seen from the next turn on, that is by any request that reached this one after the commit; this
 * process's own writes forget it as each ends (`createGroupWriter`'s `written`), so a request reads its own writes.
 * No answer (a commit under way) is not kept.
 */
function oncePerTurn(stamp: () => ChangeStamp): { read: () => ChangeStamp; forget: () => void } {
  let kept: ChangeStamp = null;
  const forget = () => {
    kept = null;
  };
  return {
    read: () => {
      if (kept !== null) return kept;
      kept = stamp();
      if (kept !== null) setImmediate(forget);
      return kept;
    },
    forget,
  };
}

/**
 * What changes with every commit to the database file, by any connection of any process (issue 19), read before
 * each cached read: the WAL index header at the start of the `-shm` file (~100 bytes, one pread; SQLite's
 * documented wal-index format, sqlite.org/walformat.html): two copies of a 48-byte header (version 3007000;
 * `iChange` at byte 8 counts transactions, `mxFrame` at 16, a salt at 32), written copy 2 first, so equal copies
 * are a consistent read; unequal ones (a commit under way) answer null: read afresh. Where that cannot be used,
 * PRAGMA data_version on a connection of its own (~10 us under load: it opens a read transaction, with file locks).
 */
function changeProbe(path: string): { stamp: () => string | number | null; close: () => void; counts?: true } {
  return walIndexStamp(`${path}-shm`) ?? dataVersionStamp(path);
}

/** The WAL index header's transaction counter, frame count and salt; null where the header can't be read as expected. */
function walIndexStamp(shm: string): { stamp: () => string | null; close: () => void; counts: true } | null {
  const fd = walIndexFd(shm);
  if (fd === null) return null;
  const header = new Uint8Array(96);
  const view = new DataView(header.buffer);
  const word = (copy: number, at: number) => view.getUint32(copy * 48 + at, true);
  const read = () => {
    try {
      return readSync(fd, header, 0, 96, 0) === 96;
    } catch {
      return false;
    }
  };
  if (!read() || word(0, 0) !== 3007000 || header[12] !== 1) return null;
  return {
    stamp: () => {
      if (!read()) return null;
      const change = word(0, 8);
      const frames = word(0, 16);
      const salt = word(0, 32);
      if (word(1, 8) !== change || word(1, 16) !== frames || word(1, 32) !== salt) return null;
      return `${change}:${frames}:${salt}`;
    },
    // the descriptor stays open (walIndexFd)
    close: () => {},
    // its stamps start with the transaction counter (own-commits.ts)
    counts: true,
  };
}

/** PRAGMA data_version on a connection of its own, which never writes. */
function dataVersionStamp(path: string): { stamp: () => number | null; close: () => void } {
  // no busy timeout: a busy moment answers null (read afresh) rather than stalling the event loop
  const conn = new Database(path);
  const version = conn.prepare("PRAGMA data_version");
  version.raw(true);
  return {
    stamp: () => {
      try {
        return Number((version.get() as [number])[0]);
      } catch {
        return null;
      }
    },
    close: () => conn.close(),
  };
}

/**
 * A descriptor of the WAL index, opened once per file and never closed: closing any descriptor of a file drops
 * every POSIX lock this process holds on it, SQLite's own included, and another process would then take the
 * index as abandoned and truncate it under the running server (a first version that mapped the file with
 * Bun.mmap, which closes its descriptor, did exactly that: SIGBUS in a two-instance test). Kept per inode, so a
 * file deleted and made again gets a new descriptor.
 */
const walIndexFds = new Map<string, number>();
function walIndexFd(shm: string): number | null {
  try {
    const inode = statSync(shm).ino;
    const key = `${shm}\0${inode}`;
    let fd = walIndexFds.get(key);
    if (fd === undefined) {
      fd = openSync(shm, "r");
      if (fstatSync(fd).ino !== inode) return null; // replaced in between: leave the descriptor open, as ever
      walIndexFds.set(key, fd);
    }
    return fd;
  } catch {
    return null;
  }
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

/** The schema version a database records: its user_version, or (a server) how many migrations it has applied. */
export async function schemaVersionOf(client: Client): Promise<number> {
  const recorded = await client.execute("PRAGMA user_version").then((r) => Number(r.rows[0]?.[0] ?? 0), () => 0);
  const applied = await client.execute("SELECT count(*) FROM schema_migrations").then((r) => Number(r.rows[0]?.[0] ?? 0), () => 0);
  return Math.max(recorded, applied);
}

/**
 * Applies each embedded migration once and records the schema version; refuses a database written by a newer
 * binary. Several instances starting together serialize on the write lock. A migration whose first line says
 * `-- no-transaction` (VACUUM can't run in one) runs statement by statement; its statements are idempotent.
 */
async function applyMigrations(client: Client, isFile: boolean): Promise<void> {
  await client.execute("CREATE TABLE IF NOT EXISTS schema_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const found = await schemaVersionOf(client);
  if (found > SCHEMA_VERSION) throw new DatabaseOpenError("schema_too_new", `schema ${found} is newer than this binary's ${SCHEMA_VERSION}: upgrade the binary`);
  const applied = new Set((await client.execute("SELECT tag FROM schema_migrations")).rows.map((r) => String(r.tag)));
  for (const [i, m] of migrations.entries()) {
    if (applied.has(m.tag)) continue;
    const statements = m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean);
    const record: InStatement[] = [{ sql: "INSERT OR IGNORE INTO schema_migrations (tag, applied_at) VALUES (?, ?)", args: [m.tag, Date.now()] }];
    if (isFile) record.push(`PRAGMA user_version = ${i + 1}`);
    if (m.sql.startsWith("-- no-transaction")) {
      for (const statement of statements) await client.execute(statement);
      await client.batch(record, "write");
      continue;
    }
    try {
      await client.batch([...record, ...statements], "write");
    } catch (err) {
      const raced = (await client.execute({ sql: "SELECT 1 FROM schema_migrations WHERE tag = ?", args: [m.tag] })).rows.length > 0;
      if (!raced) throw err;
    }
  }
  // databases migrated before the version was recorded
  if (isFile && Number((await client.execute("PRAGMA user_version")).rows[0]?.[0] ?? 0) < SCHEMA_VERSION) await client.execute(`PRAGMA user_version = ${SCHEMA_VERSION}`);
}

/** A libSQL transaction dressed as a Db: its statements run in order on the transaction (no group commit). */
function sqliteTx(raw: Db, db: Db): Db {
  const exec = async (q: SQL) => {
    const r = await (raw as any).run(q);
    return { rows: r.rows as any[], changed: Math.max(r.rowsAffected, r.rows.length) };
  };
  return Object.assign(raw, {
    d: sqliteDialect,
    t: schema,
    rows: async <T>(q: SQL) => (await exec(q)).rows as T[],
    exec: async (q: SQL) => ({ changed: (await exec(q)).changed }),
    write: sequentialWrite((q) => exec(q)),
    tx: <T>(fn: (tx: Db) => Promise<T>) => fn(raw),
    changeStamp: () => null,
    ownCommits: null,
    close: db.close,
    $client: db.$client,
    $writer: db.$writer,
    $path: db.$path,
    $created: db.$created,
  }) as Db;
}
