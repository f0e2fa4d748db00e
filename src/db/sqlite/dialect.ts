// SQLite's (embedded libSQL's) side of the Dialect: one writer at a time, so no row locks; its own JSON functions.
import { sql } from "drizzle-orm";
import { pairs, type Dialect } from "../dialect";

/** The error's message and its cause's (drizzle wraps the driver's error). */
const messageOf = (err: unknown) => String((err as any)?.message ?? "") + " " + String((err as any)?.cause?.message ?? "");

export const sqliteDialect: Dialect = {
  name: "sqlite",
  forUpdate: sql``,
  locking: () => [],
  skipLocked: sql``,
  prevChanged: sql`changes()`,
  indexHint: (name) => sql.raw(`INDEXED BY ${name}`),
  jsonTextArray: (values) => sql`json_each(${JSON.stringify(values)}) AS j`,
  jsonObjects: (fields, orderBy) => sql`json_group_array(json_object(${pairs(fields)}) ORDER BY ${orderBy})`,
  bytewise: (text) => text,
  includes: (text, needle) => sql`instr(${text}, ${needle}) > 0`,
  jsonArrayHas: (json, key, value) => sql`EXISTS (SELECT 1 FROM json_each(${json}, ${`$.${key}`}) WHERE value = ${value})`,
  greatest: (a, b) => sql`max(${a}, ${b})`,
  uniqueKey(err) {
    const m = /UNIQUE constraint failed: (index '[^']+'|[\w.]+(?:, [\w.]+)*)/.exec(messageOf(err));
    return m ? m[1] : null;
  },
  isRetryable: (err) => /SQLITE_BUSY|database is locked/.test(messageOf(err) + String((err as any)?.code ?? "")),
  lockKey: () => sql`SELECT 1`,
};
