// The one way services reach the database, on either engine (issue 18, DIALECTS.md 2): raw SQL built with drizzle's
// `sql` and the dialect's pieces, run as reads, single writes, or atomic groups of writes.
import type { SQL } from "drizzle-orm";
import type { Dialect } from "./dialect";
import type { NewSubscriber } from "./sign-ups";

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
  /**
   * The INSERT of one new subscriber, for a `write` (sign-ups.ts): it answers the new row with its position, or no row
   * when the email is there already. How a store runs many of them at once is its own business.
   */
  insertSubscriber(subscriber: NewSubscriber): SQL;
}

const LINE = Symbol("the line this statement locks");

/**
 * Marks a statement that locks a waitlist's line (`lockLine`). On PostgreSQL the batches that start with one are
 * grouped per line, each line's in a transaction of its own (pg/store.ts): the lock order of docs/decisions.md
 * "One lock order for writes to a line".
 */
export const locksLine = (query: SQL, waitlistId: string): SQL => Object.assign(query, { [LINE]: waitlistId });

/** The line a batch locks first, if it does. */
export const lineOf = (batch: SQL[]): string | undefined => (batch[0] as { [LINE]?: string } | undefined)?.[LINE];

const KEY = Symbol("the key this statement locks");

/** Marks a statement that locks a key (`d.lockKey`): a group takes its batches' keys in one order. */
export const locksKey = (query: SQL, key: string): SQL => Object.assign(query, { [KEY]: key });

/** The first key a batch locks, if any. */
export const keyOf = (batch: SQL[]): string | undefined => {
  for (const query of batch) {
    const key = (query as { [KEY]?: string })[KEY];
    if (key !== undefined) return key;
  }
  return undefined;
};
