// What differs between SQLite (embedded libSQL) and PostgreSQL, and nothing else (issue 18, DIALECTS.md 1):
// services build their SQL from these pieces and never ask which engine they run on.
// The two implementations: sqlite/dialect.ts and pg/dialect.ts.
import { sql, type SQL } from "drizzle-orm";

export interface Dialect {
  /** For the CLI and the tests; a service never asks (test/engine-rules.unit.test.ts). */
  readonly name: "sqlite" | "pg";
  /** Locks the rows a SELECT reads until the transaction ends; empty on SQLite, whose write lock serializes writers. */
  readonly forUpdate: SQL;
  /**
   * The statements that lock rows before a write reads what it decides on, as given (each ends in `forUpdate`); none
   * on SQLite, whose one writer at a time makes them a statement for nothing.
   */
  locking(statements: SQL[]): SQL[];
  /** Skips rows another transaction has locked (outbox claims); empty on SQLite. */
  readonly skipLocked: SQL;
  /** The number of rows the previous statement of the same `write` changed. */
  readonly prevChanged: SQL;
  /** Names the index a query must use (SQLite's planner prefers a covering index otherwise); empty on PostgreSQL. */
  indexHint(name: string): SQL;
  /** A FROM item `j` with one text column `value`, a row per element. */
  jsonTextArray(values: string[]): SQL;
  /** A JSON array (as text, `[]` when empty) of one object per row, `{key: value}` from `fields`, in `orderBy` order. */
  jsonObjects(fields: Record<string, SQL>, orderBy: SQL): SQL;
  /** `text` ordered by its bytes, whatever the database's locale (SQLite's only order; PostgreSQL's COLLATE "C"). */
  bytewise(text: SQL): SQL;
  /** True when `text` holds `needle` as it is (case-sensitive on both engines; LIKE is not on SQLite). */
  includes(text: SQL, needle: string): SQL;
  /** True when the JSON object text `json` has at `key` an array holding the string `value`. */
  jsonArrayHas(json: SQL, key: string, value: string): SQL;
  /** The larger of two values (SQLite's two-argument max). */
  greatest(a: SQL, b: SQL): SQL;
  /** What a unique-constraint failure is about, spelled as SQLite spells it ("waitlists.slug"); null for other errors. */
  uniqueKey(err: unknown): string | null;
  /** A busy database, serialization failure or deadlock: the whole transaction may run again. */
  isRetryable(err: unknown): boolean;
  /**
   * A statement holding a lock on `key` until the transaction ends, for a decision no row stands for yet (the
   * confirmation caps of one email address across waitlists); SQLite: a no-op, its write lock serializes writers.
   */
  lockKey(key: string): SQL;
}

/** `'key', value, ...` for json_object / json_build_object; keys are our own identifiers, never input. */
export const pairs = (fields: Record<string, SQL>) => sql.join(Object.entries(fields).map(([k, v]) => sql`${sql.raw(`'${k}'`)}, ${v}`), sql`, `);
