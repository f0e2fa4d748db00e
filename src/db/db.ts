// The database as every service sees it, on either engine (DIALECTS.md 2): drizzle's builder over the engine's own
// tables (`db.t`), the Store's raw SQL (`rows`, `exec`, `write`, `d`), and interactive transactions (`tx`). Nothing
// here names an engine: sqlite/ and pg/ each build one (open.ts picks by URL).
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as pgSchema from "./schema.pg";
import type { Store } from "./store";
import type { TimingHook } from "./timing";

/**
 * The engine's tables for the builder: `db.select().from(db.t.waitlists)`. Typed as PostgreSQL's; on SQLite they are
 * SQLite's tables of the same names and columns (test/schema-parity.unit.test.ts keeps the two in step).
 */
export type Tables = typeof pgSchema;

/**
 * The builder, typed as PostgreSQL's: a query's rows come only by awaiting it, so SQLite's own terminal calls
 * (`.get()`, `.all()`, `.run()`, `.values()`) are type errors. The few PostgreSQL-only calls (`.for()`,
 * `distinctOn`, `ilike`) are refused by test/engine-rules.unit.test.ts, and every service runs on both engines in
 * `npm test`.
 */
type Builder = Pick<PgDatabase<PgQueryResultHKT, typeof pgSchema>, "select" | "selectDistinct" | "insert" | "update" | "delete">;

export type ChangeStamp = number | string | null;

/** This process's own commits, as far as it knows them (sqlite/own-commits.ts; the embedded file only). */
export interface CommitLog {
  /** True when every commit from `from` to `to` is known and none wrote any of `tables`. */
  cleanSince(from: ChangeStamp, to: ChangeStamp, tables: ReadonlySet<string>): boolean;
}

/** How big the database is: the embedded file and its WAL, or PostgreSQL's pg_database_size (no WAL of its own). */
export interface DatabaseSize {
  bytes: number;
  walBytes: number | null;
}

export interface TxOptions {
  /**
   * false: the commit need not wait for the disk: a crash of the machine may lose it whole, never part of it, and it
   * never comes before a write that was acknowledged. Only for work that records its own progress in the same
   * transaction and is redone from it (an import's batch, issue 47). SQLite commits it with `synchronous = NORMAL`
   * (no fsync, which the requests' writes would wait behind: one writer). PostgreSQL commits it as any other: with
   * `synchronous_commit = off` its WAL waited for the next commit that flushes, and a sign-up's COMMIT carried the
   * import's steps to the disk (15-30 ms each, most of the sign-ups over 10 ms; bench/README.md, 2026-12-07).
   */
  durable?: boolean;
}

export interface Db extends Store, Builder {
  readonly t: Tables;
  /**
   * An interactive transaction: SQLite takes the write lock at its start (IMMEDIATE); PostgreSQL runs it
   * READ COMMITTED, so a read that decides a write locks its rows (`d.forUpdate`), and the whole function is
   * run again on a serialization failure or deadlock.
   */
  tx<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T>;
  close(): Promise<void>;
  /**
   * A value that differs from any earlier one once anything was committed to the database since, by this process
   * or another instance (caches are checked against it). null when it can't tell (an in-memory database, an error):
   * then nothing may be taken from a cache.
   */
  changeStamp(): ChangeStamp | Promise<ChangeStamp>;
  /** The commits this process made, by their stamps; null where the engine can't tell (read-cache.ts). */
  readonly ownCommits: CommitLog | null;
  /** Folds what the engine keeps beside its data into it (the embedded WAL); false if a reader kept it busy. */
  checkpoint(): Promise<boolean>;
  /** Nightly upkeep: hands freed pages back to the file system (embedded); how many. */
  compact(): Promise<{ freedPages: number }>;
  /** The database's size; null where there is none to tell (an in-memory database). */
  size(): Promise<DatabaseSize | null>;
  /** Sets (or clears) the hook told how long each database call took (for /metrics). */
  onTiming(hook: TimingHook | null): void;
  /** The embedded database's file; null for PostgreSQL. */
  readonly $path: string | null;
  /** Folders and files that did not exist before this process opened the database. */
  readonly $created: string[];
}
