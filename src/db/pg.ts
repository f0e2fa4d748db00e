// PostgreSQL (issue 18): the connection pool, its migrations, and the Store over it. int8 and numeric come back
// as numbers (counts, sums and ms times all fit in 2^53); the write batches of an event-loop turn share one
// transaction (group-commit.ts), run again whole on a serialization failure or deadlock. The installed driver
// carries a fix of how it loses a connection (pg-driver.ts).
import { fillPlaceholders, Placeholder, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres, { type RowList, type Sql } from "postgres";
import { DatabaseOpenError, displayUrl } from "./client";
import { sequentialWrite, type Db } from "./db";
import { pgDialect } from "./dialect";
import { isDatabaseUnavailable } from "./errors";
import { createGroupCommit } from "./group-commit";
import { applyPgMigrations } from "./pg-migrate";
import * as schema from "./schema";
import * as pgSchema from "./schema.pg";
import { lineOf, type Row, type Store } from "./store";

export interface PgSettings {
  url: string;
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
}

const RETRIES = 5;
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

/** The engine's tables under the SQLite module's names and types (the constants come along from schema.ts). */
const tables = { ...schema, ...pgSchema } as unknown as typeof schema;

/** PostgreSQL as the services' Db: the builder over the pg-core tables, the Store, retried transactions. */
export async function openPgDb(settings: PgSettings): Promise<Db> {
  const client = pgClient(settings);
  try {
    await applyPgMigrations(client);
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw explainPgFailure(err, settings.url);
  }
  const db = drizzle(client, { schema: pgSchema });
  return Object.assign(db, pgStore(client), {
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
    tx: <T>(fn: (tx: Db) => Promise<T>) =>
      retried(() => db.transaction((raw) => fn(pgTx(raw, (raw as any).session.client as Sql)))),
    $path: null,
    $created: [],
  }) as unknown as Db;
}

/** Why PostgreSQL could not be used, as one line an operator can act on (DESIGN §3). */
function explainPgFailure(err: unknown, url: string): unknown {
  const e = err as { code?: string; message?: string };
  const why = String(e?.message ?? err).split("\n")[0];
  if (e?.code === "28P01" || e?.code === "28000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} refused the login: ${why}`);
  if (e?.code === "3D000") return new DatabaseOpenError("database_unreachable", `PostgreSQL at ${displayUrl(url)} has no such database: ${why}`);
  if (!e?.code || /^(ECONN|ENOTFOUND|EAI_|ETIMEDOUT|CONNECT_TIMEOUT|EHOSTUNREACH|ENETUNREACH)/.test(e.code) || e.code.startsWith("08")) {
    return new DatabaseOpenError("database_unreachable", `cannot reach the database server at ${displayUrl(url)}: ${why}`);
  }
  return err;
}

/** A drizzle transaction dressed as a Db: statements run in order on its connection. */
function pgTx(raw: object, conn: Sql): Db {
  const run = async (q: SQL, prev = 0) => {
    const r = await exec(conn, q, prev);
    return { rows: [...r] as Row[], changed: changedOf(r) };
  };
  const tx: Db = Object.assign(raw, {
    d: pgDialect,
    t: tables,
    rows: async <T>(q: SQL) => (await run(q)).rows as T[],
    exec: async (q: SQL) => ({ changed: (await run(q)).changed }),
    write: sequentialWrite(run),
    tx: <T>(fn: (inner: Db) => Promise<T>) => fn(tx),
    changeStamp: () => null,
    ownCommits: null,
  }) as unknown as Db;
  return tx;
}

async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= RETRIES || !pgDialect.isRetryable(err)) throw err;
      await Bun.sleep(Math.random() * 10 * attempt);
    }
  }
}

const render = new PgDialect();

/**
 * Every statement as a named prepared statement (kept per connection, by text and parameter types): the
 * driver's default for `unsafe` (unnamed) first asks the server to describe every statement that has parameters and
 * waits for the answer, a round trip more per statement, and the wait stops the pipeline for the rest of the
 * transaction (60 inserts: 10 ms unnamed, 1.2 ms prepared and pipelined).
 */
const PREPARED = { prepare: true };

const exec = async (db: Sql, query: SQL, prev = 0) => {
  const { sql: text, params } = render.sqlToQuery(query);
  return db.unsafe(text, fillPlaceholders(params, { prev_changed: prev }) as any[], PREPARED);
};
const changedOf = (r: { count: number; length: number }) => Math.max(r.count ?? 0, r.length);

/**
 * Taken first by every write group, so that groups (of this instance and the others) run one at a time: a group
 * locks what its batches lock one batch after another, and two groups doing that in different orders (rate-limit
 * counters, outbox rows) would deadlock, costing a second of PostgreSQL's deadlock_timeout each time. The
 * two-key form keeps it apart from `d.lockKey`'s and the migrations' one-key locks.
 */
const GROUP_LOCK = "SELECT pg_advisory_xact_lock(1919, 18)";

/** The order a group runs its batches in: those that lock a line first, by line, then the others as they came. */
function lockOrder(batches: SQL[][]): number[] {
  const lines = batches.map(lineOf);
  const rank = (i: number) => (lines[i] === undefined ? 1 : 0);
  return batches.map((_, i) => i).sort((a, b) => rank(a) - rank(b) || (lines[a]! < lines[b]! ? -1 : lines[a]! > lines[b]! ? 1 : 0) || a - b);
}

/** A statement that needs the row count of the one before it (`d.prevChanged`). */
const needsPrevChanged = (params: unknown[]) => params.some((p) => p instanceof Placeholder && p.name === "prev_changed");
const quiet = () => {};

/**
 * Runs the batches in one transaction (one commit), each in order and atomic with it; results in their order. The
 * statements go out without waiting for each answer (the transaction's one connection runs them in the order
 * sent), so a group costs a few round trips rather than one per statement; only a statement that needs the count
 * of the one before it waits for that answer. The first statement to fail fails the group.
 */
function writeGroup(client: Sql, batches: SQL[][]): Promise<Row[][][]> {
  const order = lockOrder(batches);
  return retried(
    () =>
      client.begin(async (tx) => {
        const conn = tx as unknown as Sql;
        const sent: { batch: number; answer: Promise<RowList<Row[]>> }[] = [];
        // each is awaited below, in order; the catch starts it and keeps the ones aborted after a failure quiet
        const send = (batch: number, answer: Promise<RowList<Row[]>>) => sent.push({ batch, answer: (answer.catch(quiet), answer) });
        send(-1, conn.unsafe(GROUP_LOCK));
        for (const i of order) {
          for (const [k, query] of batches[i].entries()) {
            const { sql: text, params } = render.sqlToQuery(query);
            const prev = k > 0 && needsPrevChanged(params) ? changedOf(await sent[sent.length - 1].answer) : 0;
            send(i, conn.unsafe(text, fillPlaceholders(params, { prev_changed: prev }) as any[], PREPARED));
          }
        }
        const results: Row[][][] = batches.map(() => []);
        for (const { batch, answer } of sent) {
          const rows = [...(await answer)];
          if (batch >= 0) results[batch].push(rows);
        }
        return results;
      }) as Promise<Row[][][]>,
  );
}

export function pgStore(client: Sql): Store {
  // the group commit: a turn's batches in one transaction, run again whole on a serialization failure or
  // deadlock; a lost connection fails every batch of the group (each is answered 503)
  const write = createGroupCommit((batches: SQL[][]) => writeGroup(client, batches), {
    // one at a time: they would wait for each other's GROUP_LOCK anyway
    concurrency: 1,
    failsEveryBatch: isDatabaseUnavailable,
  });
  return {
    d: pgDialect,
    async rows<T>(query: SQL) {
      return [...(await exec(client, query))] as T[];
    },
    async exec(query: SQL) {
      return { changed: changedOf(await exec(client, query)) };
    },
    write,
  };
}
