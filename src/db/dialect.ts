// What differs between SQLite (embedded libSQL) and PostgreSQL, and nothing else (issue 18, DIALECTS.md 1):
// services build their SQL from these pieces and never ask which engine they run on.
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { sql, type SQL } from "drizzle-orm";
import * as pgSchema from "./schema.pg";

export interface Dialect {
  readonly name: "sqlite" | "pg";
  /** Locks the rows a SELECT reads until the transaction ends; empty on SQLite, whose write lock serializes writers. */
  readonly forUpdate: SQL;
  /** Whether a write must lock rows before it reads what it decides on (false on SQLite: one writer at a time). */
  readonly rowLocks: boolean;
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
const pairs = (fields: Record<string, SQL>) => sql.join(Object.entries(fields).map(([k, v]) => sql`${sql.raw(`'${k}'`)}, ${v}`), sql`, `);

const messageOf = (err: unknown) => String((err as any)?.message ?? "") + " " + String((err as any)?.cause?.message ?? "");

export const sqliteDialect: Dialect = {
  name: "sqlite",
  forUpdate: sql``,
  rowLocks: false,
  skipLocked: sql``,
  prevChanged: sql`changes()`,
  indexHint: (name) => sql.raw(`INDEXED BY ${name}`),
  jsonTextArray: (values) => sql`json_each(${JSON.stringify(values)}) AS j`,
  jsonObjects: (fields, orderBy) => sql`json_group_array(json_object(${pairs(fields)}) ORDER BY ${orderBy})`,
  greatest: (a, b) => sql`max(${a}, ${b})`,
  uniqueKey(err) {
    const m = /UNIQUE constraint failed: (index '[^']+'|[\w.]+(?:, [\w.]+)*)/.exec(messageOf(err));
    return m ? m[1] : null;
  },
  isRetryable: (err) => /SQLITE_BUSY|database is locked/.test(messageOf(err) + String((err as any)?.code ?? "")),
  lockKey: () => sql`SELECT 1`,
};

/** PostgreSQL names the constraint or index; SQLite names the columns: this maps one to the other (DIALECTS.md 9). */
const pgUniqueKeys: Map<string, string> = (() => {
  const keys = new Map<string, string>();
  for (const table of Object.values(pgSchema)) {
    if (!(table instanceof PgTable)) continue;
    const config = getTableConfig(table);
    for (const c of config.columns) if (c.isUnique) keys.set(c.uniqueName ?? `${config.name}_${c.name}_unique`, `${config.name}.${c.name}`);
    for (const c of config.columns) if (c.primary) keys.set(`${config.name}_pkey`, `${config.name}.${c.name}`);
    for (const pk of config.primaryKeys) keys.set(pk.getName(), pk.columns.map((c) => `${config.name}.${c.name}`).join(", "));
    for (const index of config.indexes) {
      if (!index.config.unique || !index.config.name) continue;
      const columns = index.config.columns.map((c) => ("name" in c && typeof c.name === "string" ? `${config.name}.${c.name}` : null));
      keys.set(index.config.name, columns.every(Boolean) ? columns.join(", ") : `index '${index.config.name}'`);
    }
  }
  return keys;
})();

export const pgDialect: Dialect = {
  name: "pg",
  forUpdate: sql` FOR UPDATE`,
  rowLocks: true,
  skipLocked: sql` FOR UPDATE SKIP LOCKED`,
  prevChanged: sql`${sql.placeholder("prev_changed")}::int`,
  indexHint: () => sql``,
  // the text cast first: the driver would otherwise send the JSON text as one JSON string
  jsonTextArray: (values) => sql`jsonb_array_elements_text(${JSON.stringify(values)}::text::jsonb) AS j(value)`,
  jsonObjects: (fields, orderBy) => sql`coalesce(json_agg(json_build_object(${pairs(fields)}) ORDER BY ${orderBy}), '[]'::json)::text`,
  greatest: (a, b) => sql`greatest(${a}, ${b})`,
  uniqueKey(err) {
    // a builder query's error (drizzle's DrizzleQueryError) carries the driver's as its cause
    const e = (err as any)?.code === undefined && (err as any)?.cause ? (err as any).cause : (err as any);
    if (e?.code !== "23505") return null;
    const name = e.constraint_name ?? e.constraint;
    return pgUniqueKeys.get(name) ?? `index '${name}'`;
  },
  isRetryable: (err) => ["40001", "40P01"].includes((err as any)?.code),
  lockKey: (key) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`,
};
