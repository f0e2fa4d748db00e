// The database as every service sees it, on either engine (issue 18, DIALECTS.md 2): drizzle's builder over the
// engine's own tables (`db.t`, typed as SQLite's), the Store's raw SQL (`rows`, `exec`, `write`, `d`), and
// interactive transactions (`tx`). What only the embedded database has ($client, $path, ...) is for the CLI's
// maintenance commands, which check `db.d.name` first.
import type { Client } from "@libsql/client";
import type { SQL } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import type { GroupWriter } from "./group-commit";
import type { OwnCommits } from "./own-commits";
import * as schema from "./schema";
import type { Row, Store } from "./store";

export type Tables = typeof schema;

export type ChangeStamp = number | string | null;

export type Db = LibSQLDatabase<typeof schema> &
  Store & {
    /** The engine's tables for the builder: `db.select().from(db.t.waitlists)`. */
    readonly t: Tables;
    /**
     * An interactive transaction: SQLite takes the write lock at its start (IMMEDIATE); PostgreSQL runs it
     * READ COMMITTED, so a read that decides a write locks its rows (`d.forUpdate`), and the whole function is
     * run again on a serialization failure or deadlock.
     */
    tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
    close(): Promise<void>;
    /**
     * A value that differs from any earlier one once anything was committed to the database since, by this process
     * or another instance (issue 19: caches are checked against it). SQLite: PRAGMA data_version on a connection of
     * its own; PostgreSQL: the snapshot (xmin:xmax:in-progress ids), which moves whenever a writing transaction
     * starts or ends. null when it can't tell (an in-memory database, an error): then nothing may be taken from a cache.
     */
    changeStamp(): ChangeStamp | Promise<ChangeStamp>;
    /** Embedded file: the commits this process made, by their stamps (own-commits.ts); null elsewhere. */
    ownCommits: OwnCommits | null;
    /** Embedded only: the libSQL client (backup, restore, doctor, compaction). */
    $client: Client;
    /** Embedded only: the group commit behind `write`. */
    $writer: GroupWriter;
    /** The embedded database's file; null for PostgreSQL. */
    $path: string | null;
    /** Folders and files that did not exist before this process opened the database. */
    $created: string[];
  };

/** A Store whose statements run one after another on an open transaction (`write` inside `tx`). */
export function sequentialWrite(run: (q: SQL, prevChanged: number) => Promise<{ rows: Row[]; changed: number }>) {
  return async (queries: SQL[]): Promise<Row[][]> => {
    const out: Row[][] = [];
    let prev = 0;
    for (const q of queries) {
      const r = await run(q, prev);
      prev = r.changed;
      out.push(r.rows);
    }
    return out;
  };
}
