// PostgreSQL: the connection pool, its migrations, and the Db over it (store.ts). int8 and numeric come back as
// numbers (counts, sums and ms times all fit in 2^53). The installed driver carries a fix of how it loses a
// connection (driver.ts).
import { drizzle } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import type { Db } from "../db";
import { DatabaseOpenError } from "../errors";
import * as schema from "../schema";
import * as pgSchema from "../schema.pg";
import { timed, type Timing } from "../timing";
import { displayUrl } from "../url";
import { applyPgMigrations } from "./migrate";
import { pgStore, pgTx, retried } from "./store";

export interface PgSettings {
  url: string;
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
}

const toNumber = (v: string) => Number(v);

function pgClient(settings: PgSettings): Sql {
  return postgres(settings.url, {
    max: settings.poolSize,
    connect_timeout: 10,
    // a lost connection is tried again within a second (the driver's default backs off to 20 s): while
    // PostgreSQL restarts, queries fail fast into 503s instead of queueing behind a sleeping connection
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    onnotice: () => {},
    // no lookup of the array types on each new connection (no column or parameter here is an array): one round
    // trip less per connection, and none of that lookup's failures while PostgreSQL restarts, which the driver
    // leaves as unhandled rejections or replays onto the next query (porsager/postgres#1192, #1223)
    fetch_types: false,
    connection: { statement_timeout: settings.statementTimeoutMs, application_name: "waitlist" },
    types: {
      int8: { to: 20, from: [20], serialize: String, parse: toNumber },
      numeric: { to: 1700, from: [1700], serialize: String, parse: toNumber },
    } as any,
  });
}

/** The engine's tables (the constants come along from schema.ts). */
const tables = { ...schema, ...pgSchema } as unknown as Db["t"];

/** PostgreSQL as the services' Db: the builder over the pg-core tables, the Store, retried transactions. */
export async function openPgDb(settings: PgSettings): Promise<Db> {
  const client = pgClient(settings);
  try {
    await applyPgMigrations(client);
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw explainPgFailure(err, settings.url);
  }
  const builder = drizzle(client, { schema: pgSchema });
  const timing: Timing = { hook: null };
  const store = pgStore(client);
  // the Store's calls are where the services' SQL goes; builder queries outside a \`tx\` are not timed
  const db: Db = Object.assign(builder, store, {
    rows: timed(timing, "execute", store.rows) as Db["rows"],
    exec: timed(timing, "execute", store.exec),
    write: timed(timing, "batch", store.write),
    t: tables,
    close: () => client.end({ timeout: 5 }),
    ownCommits: null,
    changeStamp: async () => {
      try {
        return String((await client`SELECT pg_current_snapshot()::text AS s`)[0].s);
      } catch {
        return null;
      }
    },
    // PostgreSQL keeps its own files
    checkpoint: async () => true,
    compact: async () => ({ freedPages: 0 }),
    size: async () => ({ bytes: Number((await client`SELECT pg_database_size(current_database()) AS b`)[0].b), walBytes: null }),
    onTiming: (hook: Timing["hook"]) => void (timing.hook = hook),
    tx: timed(timing, "transaction", <T>(fn: (tx: Db) => Promise<T>) =>
      retried(() => builder.transaction((raw) => fn(pgTx(raw, (raw as any).session.client as Sql, db))))) as Db["tx"],
    $path: null,
    $created: [],
  }) as unknown as Db;
  return db;
}

/** Why PostgreSQL could not be used, as one line an operator can act on (DESIGN §3). */
function explainPgFailure(err: unknown, url: string): unknown {
  const e = err as { code?: string; message?: string };
  const why = String(e?.message ?? err).split("\n")[0];
  if (e?.code === "28P01" || e?.code === "28000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} refused the login: ${why}`);
  if (e?.code === "3D000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} has no such database: ${why}`);
  // the first start creates the schema: a database the URL's user does not own (PostgreSQL 15+ lets only the owner
  // create in schema public) refuses it
  if (e?.code === "42501") {
    const db = new URL(url).pathname.slice(1) || "the database";
    return new DatabaseOpenError(
      "database_unwritable",
      `PostgreSQL at ${displayUrl(url)} does not let this user create the schema (${why}): make the user own the database (ALTER DATABASE ${db} OWNER TO <user>) or GRANT CREATE ON SCHEMA public TO <user>`,
    );
  }
  if (!e?.code || /^(ECONN|ENOTFOUND|EAI_|ETIMEDOUT|CONNECT_TIMEOUT|EHOSTUNREACH|ENETUNREACH)/.test(e.code) || e.code.startsWith("08")) {
    return new DatabaseOpenError("database_unreachable", `cannot reach the database server at ${displayUrl(url)}: ${why}`);
  }
  return err;
}

