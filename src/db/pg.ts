// PostgreSQL (issue 18): the connection pool, its migrations, and the Store over it. int8 and numeric come back
// as numbers (counts, sums and ms times all fit in 2^53); every write group is one transaction, run again on a
// serialization failure or deadlock.
import { fillPlaceholders, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import postgres, { type Sql } from "postgres";
import { pgDialect } from "./dialect";
import { applyPgMigrations } from "./pg-migrate";
import type { Row, Store } from "./store";

export interface PgSettings {
  url: string;
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
}

const RETRIES = 5;
const toNumber = (v: string) => Number(v);

export async function openPg(settings: PgSettings): Promise<{ client: Sql; store: Store }> {
  const client = postgres(settings.url, {
    max: settings.poolSize,
    onnotice: () => {},
    connection: { statement_timeout: settings.statementTimeoutMs, application_name: "waitlist" },
    types: {
      int8: { to: 20, from: [20], serialize: String, parse: toNumber },
      numeric: { to: 1700, from: [1700], serialize: String, parse: toNumber },
    } as any,
  });
  await applyPgMigrations(client);
  return { client, store: pgStore(client) };
}

const render = new PgDialect();

export function pgStore(client: Sql): Store {
  const exec = async (db: Sql, query: SQL, prev = 0) => {
    const { sql: text, params } = render.sqlToQuery(query);
    return db.unsafe(text, fillPlaceholders(params, { prev_changed: prev }) as any[]);
  };
  const changedOf = (r: { count: number; length: number }) => Math.max(r.count ?? 0, r.length);
  return {
    d: pgDialect,
    async rows<T>(query: SQL) {
      return [...(await exec(client, query))] as T[];
    },
    async exec(query: SQL) {
      return { changed: changedOf(await exec(client, query)) };
    },
    async write(queries: SQL[]) {
      for (let attempt = 1; ; attempt++) {
        try {
          return (await client.begin(async (tx) => {
            const out: Row[][] = [];
            let prev = 0;
            for (const q of queries) {
              const r = await exec(tx as unknown as Sql, q, prev);
              prev = changedOf(r);
              out.push([...r] as Row[]);
            }
            return out;
          })) as Row[][];
        } catch (err) {
          if (attempt >= RETRIES || !pgDialect.isRetryable(err)) throw err;
          await Bun.sleep(Math.random() * 10 * attempt);
        }
      }
    },
  };
}
