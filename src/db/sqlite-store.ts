// The Store on embedded libSQL: statements flattened once (toStatement), writes through the group commit.
import type { SQL } from "drizzle-orm";
import type { Db } from "./client";
import { toStatement } from "./client";
import { sqliteDialect } from "./dialect";
import type { Row, Store } from "./store";

/** libSQL counts no changed rows for a statement with RETURNING: its rows are the count then. */
const changedOf = (r: { rowsAffected: number; rows: unknown[] }) => Math.max(r.rowsAffected, r.rows.length);

export function sqliteStore(db: Db): Store {
  return {
    d: sqliteDialect,
    async rows<T>(query: SQL) {
      return (await db.$client.execute(toStatement(db, query))).rows as unknown as T[];
    },
    async exec(query: SQL) {
      return { changed: changedOf(await db.$client.execute(toStatement(db, query))) };
    },
    async write(queries: SQL[]) {
      const results = await db.$writer.write(queries.map((q) => toStatement(db, q)));
      return results.map((r) => r.rows as unknown as Row[]);
    },
  };
}
