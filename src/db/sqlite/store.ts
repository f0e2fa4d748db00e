// The Store on embedded libSQL: statements flattened once (toStatement), writes through the group commit, a turn's
// sign-ups merged (sign-ups.ts); and an interactive transaction dressed as a Db.
import type { Client, InStatement, ResultSet } from "@libsql/client";
import { drizzle as drizzleProxy } from "drizzle-orm/sqlite-proxy";
import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "../db";
import { signUpInserts } from "../sign-ups";
import type { Row, Store } from "../store";
import { transactionDb } from "../transaction";
import { filledOf } from "../template";
import { flatten } from "../flatten";
import { sqliteDialect } from "./dialect";
import type { GroupWriter } from "./group-writer";
import { mergeSignUps } from "./sign-ups";

const render = new SQLiteAsyncDialect();
const question = () => "?";

/**
 * A drizzle `sql` fragment as a libSQL statement (for the group writer). Our raw statements hold
 * only text, values and nested fragments, which this flattens directly (drizzle's general builder
 * was ~8% of a sign-up); anything else (columns, tables, placeholders) goes through drizzle.
 */
export const toStatement = (query: SQL): InStatement => {
  const filled = filledOf(query);
  if (filled) {
    const statement = { sql: filled.text, args: filled.args as any[] };
    // the file writer steps it once, and merges a run of one INSERT template's rows (file-writer.ts); other engines
    // see a plain statement
    if (filled.oneRow) Object.assign(statement, { oneRow: true });
    return filled.rows ? Object.assign(statement, { rows: filled.rows }) : statement;
  }
  // a placeholder is drizzle's to fill in
  const flat = flatten(query, question);
  if (flat && !flat.placeholders) return { sql: flat.sql, args: flat.params as any[] };
  const { sql: text, params } = render.sqlToQuery(query);
  return { sql: text, args: params as any[] };
};

/** libSQL counts no changed rows for a statement with RETURNING: its rows are the count then. */
const changedOf = (r: { rowsAffected: number; rows: unknown[] }) => Math.max(r.rowsAffected, r.rows.length);
const changedRows = (r: { rowsAffected: number; rows: Row[] }) => ({ rows: r.rows, changed: changedOf(r) });

/** The embedded engine's sign-up INSERT: a turn's run of them to one waitlist merged into one statement. */
const insertSubscriber = signUpInserts(mergeSignUps);

export function sqliteStore(client: Client, writer: GroupWriter): Store {
  return {
    d: sqliteDialect,
    async rows<T>(query: SQL) {
      return (await client.execute(toStatement(query))).rows as unknown as T[];
    },
    async exec(query: SQL) {
      return { changed: changedOf(await client.execute(toStatement(query))) };
    },
    async write(queries: SQL[]) {
      const results = await writer.write(queries.map(toStatement));
      return results.map((r) => r.rows as unknown as Row[]);
    },
    insertSubscriber,
  };
}

/** A bare libSQL client's reads and writes (restore and doctor open the file without migrating it). */
export function clientStore(client: Client): Pick<Store, "rows" | "write"> {
  return {
    rows: async <T>(q: SQL) => (await client.execute(toStatement(q))).rows as unknown as T[],
    write: async (qs: SQL[]) => (await client.batch(qs.map(toStatement), "write")).map((r) => r.rows as unknown as Row[]),
  };
}

/** A libSQL transaction (drizzle's) dressed as a Db: its statements run in order on the transaction (no group commit). */
export function sqliteTx(raw: object, db: Db): Db {
  const run = async (q: SQL) => changedRows(await (raw as { run(q: SQL): Promise<{ rows: Row[]; rowsAffected: number }> }).run(q));
  return transactionDb(raw, db, run);
}

/**
 * Interactive transactions on the file's writer connection (file-writer.ts `interactive`), each dressed as a Db: its
 * statements prepared once and stepped as a group's, a write's run of sign-up INSERTs merged as a group's, and its
 * COMMIT off the event loop (issue 47: on the client's connection each import batch's COMMIT and fsync held the event
 * loop, p99 4 ms). drizzle's builder (over sqlite-proxy, made once per database) runs its queries on the transaction
 * in hand, one at a time as the group writer's lock allows.
 */
export function fileTransactions(schema: Record<string, unknown>) {
  type Run = (statements: InStatement[]) => ResultSet[];
  let current: Run | null = null;
  const builder = drizzleProxy(
    async (text, params, method) => {
      if (!current) throw new Error("a transaction's builder used after the transaction ended");
      const [result] = current([{ sql: text, args: params }]);
      const rows = result!.rows.map((row) => Array.from(row as unknown as ArrayLike<unknown>));
      return { rows: method === "get" ? rows[0]! : method === "run" ? [] : rows };
    },
    { schema },
  );
  return <T>(fn: (tx: Db) => Promise<T>, db: Db) =>
    async (run: Run): Promise<T> => {
      current = run;
      try {
        const one = async (q: SQL) => changedRows(run([toStatement(q)])[0]!);
        // a prototype of its own: transactionDb gives it the transaction's members
        const raw = Object.create(builder) as object;
        return await fn(transactionDb(raw, db, one, async (queries) => run(queries.map(toStatement)).map((r) => r.rows as unknown as Row[])));
      } finally {
        current = null;
      }
    };
}
