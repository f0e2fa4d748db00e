// PostgreSQL's side of the Dialect: row locks, SKIP LOCKED, its JSON functions, and its errors read as SQLite names them.
import { sql } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { pairs, type Dialect } from "../dialect";
import { locksKey } from "../store";
import * as pgSchema from "../schema.pg";

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

/**
 * The SQLSTATE of an error PostgreSQL sent ("23505"), which Bun's SQL client keeps in `errno` (its `code` is then
 * ERR_POSTGRES_SERVER_ERROR); else the client's own code (ERR_POSTGRES_CONNECTION_REFUSED, ECONNRESET).
 */
export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { errno?: unknown; code?: unknown } | null;
  return typeof e?.errno === "string" ? e.errno : typeof e?.code === "string" ? e.code : undefined;
}

export const pgDialect: Dialect = {
  name: "pg",
  forUpdate: sql` FOR UPDATE`,
  locking: (statements) => statements,
  skipLocked: sql` FOR UPDATE SKIP LOCKED`,
  prevChanged: sql`${sql.placeholder("prev_changed")}::int`,
  indexHint: () => sql``,
  // the text cast first: the driver would otherwise send the JSON text as one JSON string
  jsonTextArray: (values) => sql`jsonb_array_elements_text(${JSON.stringify(values)}::text::jsonb) AS j(value)`,
  jsonObjects: (fields, orderBy) => sql`coalesce(json_agg(json_build_object(${pairs(fields)}) ORDER BY ${orderBy}), '[]'::json)::text`,
  bytewise: (text) => sql`${text} COLLATE "C"`,
  includes: (text, needle) => sql`strpos(${text}, ${needle}) > 0`,
  jsonArrayHas: (json, key, value) => sql`jsonb_exists(${json}::jsonb -> ${key}, ${value})`,
  greatest: (a, b) => sql`greatest(${a}, ${b})`,
  uniqueKey(err) {
    // a builder query's error (drizzle's DrizzleQueryError) carries the driver's as its cause
    const e = (err as any)?.code === undefined && (err as any)?.cause ? (err as any).cause : (err as any);
    if (pgErrorCode(e) !== "23505") return null;
    const name = e.constraint;
    return pgUniqueKeys.get(name) ?? `index '${name}'`;
  },
  isRetryable: (err) => ["40001", "40P01"].includes(pgErrorCode(err) as string),
  lockKey: (key) => locksKey(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`, key),
};
