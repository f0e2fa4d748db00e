// The one way services reach the database, on either engine (issue 18, DIALECTS.md 2): raw SQL built with drizzle's
// `sql` and the dialect's pieces, run as reads, single writes, or atomic groups of writes.
import type { SQL } from "drizzle-orm";
import type { Dialect } from "./dialect";

export type Row = Record<string, unknown>;

export interface Store {
  readonly d: Dialect;
  /** A read (or a write with RETURNING): its rows, integers as numbers. */
  rows<T = Row>(query: SQL): Promise<T[]>;
  /** A write: how many rows it changed (with RETURNING: how many it returned). */
  exec(query: SQL): Promise<{ changed: number }>;
  /**
   * The statements in order, atomically: all or none. Each may use `d.prevChanged` for the row count of the one
   * before it. SQLite: shares the group commit of this event-loop turn. PostgreSQL: one transaction, run again
   * whole on a serialization failure or deadlock.
   */
  write(queries: SQL[]): Promise<Row[][]>;
}
