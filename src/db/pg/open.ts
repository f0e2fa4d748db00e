// PostgreSQL: the connection pool, its migrations, and the Db over it (store.ts). The driver is Bun's own SQL client
// (no package: its version is Bun's, pinned in package.json); it was chosen by the outage test (docs/decisions.md,
// "Issue 43 item 6"). It gives int8 and numeric as text: the Store turns them into numbers, the builder's
// columns map their own.
import { SQL as Sql } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { Db } from "../db";
import { DatabaseOpenError, isDatabaseUnavailable } from "../errors";
import * as schema from "../schema";
import * as pgSchema from "../schema.pg";
import { timed, type Timing } from "../timing";
import { displayUrl } from "../url";
import { pgErrorCode } from "./dialect";
import { applyPgMigrations } from "./migrate";
import { pgStore, pgTx, retried } from "./store";

export interface PgSettings {
  url: string;
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
}

function pgClient(settings: PgSettings): Sql {
  // a lost connection is opened again at the next query, after a failed attempt within a second (Bun's backoff:
  // tens of ms, doubling, at most 1 s): while PostgreSQL restarts, queries fail fast into 503s
  return new Sql(settings.url, {
    max: settings.poolSize,
    connectionTimeout: 10,
    // sent in the startup message: every connection of the pool has them, reconnected ones too
    connection: { statement_timeout: settings.statementTimeoutMs, application_name: "waitlist" },
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
    await client.close({ timeout: 1 }).catch(() => {});
    throw explainPgFailure(err, settings.url);
  }
  const builder = drizzle({ client, schema: pgSchema });
  const timing: Timing = { hook: null };
  const store = pgStore(client);
  // the Store's calls are where the services' SQL goes; builder queries outside a \`tx\` are not timed
  const db: Db = Object.assign(builder, store, {
    rows: timed(timing, "execute", store.rows) as Db["rows"],
    exec: timed(timing, "execute", store.exec),
    write: timed(timing, "batch", store.write),
    t: tables,
    close: () => client.close({ timeout: 5 }),
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
    // `durable: false` is not taken up here (db.ts TxOptions): each commit flushes its own WAL
    tx: timed(timing, "transaction", <T>(fn: (tx: Db) => Promise<T>) =>
      retried(() => builder.transaction(async (raw) => fn(pgTx(raw, (raw as any).session.client as Sql, db)))),
    ) as Db["tx"],
    $path: null,
    $created: [],
  }) as unknown as Db;
  return db;
}

/** Why PostgreSQL could not be used, as one line an operator can act on (DESIGN §3). */
export function explainPgFailure(err: unknown, url: string): unknown {
  const code = pgErrorCode(err);
  const why = String((err as Error)?.message ?? err).split("\n")[0];
  if (code === "28P01" || code === "28000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} refused the login: ${why}`);
  if (code === "3D000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} has no such database: ${why}`);
  // the first start creates the schema: a database the URL's user does not own (PostgreSQL 15+ lets only the owner
  // create in schema public) refuses it
  if (code === "42501") {
    const db = new URL(url).pathname.slice(1) || "the database";
    return new DatabaseOpenError(
      "database_unwritable",
      `PostgreSQL at ${displayUrl(url)} does not let this user create the schema (${why}): make the user own the database (ALTER DATABASE ${db} OWNER TO <user>) or GRANT CREATE ON SCHEMA public TO <user>`,
    );
  }
  if (code === "ERR_POSTGRES_TLS_NOT_AVAILABLE") {
    const mode = new URL(url).searchParams.get("sslmode") ?? "require";
    return new DatabaseOpenError(
      "database_unreachable",
      `PostgreSQL at ${displayUrl(url)} does not offer TLS, which sslmode=${mode} in DATABASE_URL asks for: turn on ssl in the server's postgresql.conf, or (on a private network only) drop sslmode from the URL`,
    );
  }
  // refused, lost, timed out (Bun names a host it cannot resolve "refused" too), or a TLS failure
  if (!code || isDatabaseUnavailable(err) || /^(EAI_|ERR_POSTGRES_TLS_)/.test(code)) {
    return new DatabaseOpenError("database_unreachable", `cannot reach the database server at ${displayUrl(url)}: ${why}`);
  }
  return err;
}
