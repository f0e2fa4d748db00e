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
   * before it. Shares one transaction (one commit) with the other writes of this event-loop turn; one that fails
   * fails alone (the others commit), except a lost connection, which fails them all. PostgreSQL runs the group
   * again whole on a serialization failure or deadlock.
   */
  write(queries: SQL[]): Promise<Row[][]>;
}

const LINE = Symbol("the line this statement locks");

/**
 * Marks a statement that locks a waitlist's line (`lockLine`). A PostgreSQL write group runs the batches that start
 * with one first, in line order, and the rest after them, so a group never waits for a line while holding other
 * rows (an outbox claim's, another batch's): the lock order of DECISIONS "One lock order for writes to a line".
 */
export const locksLine = (query: SQL, waitlistId: string): SQL => Object.assign(query, { [LINE]: waitlistId });

/** The line a batch locks first, if it does. */
export const lineOf = (batch: SQL[]): string | undefined => (batch[0] as { [LINE]?: string } | undefined)?.[LINE];
