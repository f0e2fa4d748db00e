// An interactive transaction dressed as a Db (`db.tx`), on either engine: the engine's transaction keeps its own
// builder, its statements run one after another on it, and the rest is the Db's.
import type { SQL } from "drizzle-orm";
import type { Db } from "./db";
import type { Row } from "./store";

/** Runs one statement on the open transaction: its rows and how many it changed. */
export type RunInTransaction = (q: SQL, prevChanged: number) => Promise<{ rows: Row[]; changed: number }>;

/** A Store's `write` whose statements run one after another on an open transaction (`write` inside `tx`). */
export function sequentialWrite(run: RunInTransaction) {
  return async (queries: SQL[]): Promise<Row[][]> => {
    const out: Row[][] = [];
    let prev = 0;
    for (const q of queries) {
      const r = await run(q, prev);
      prev = r.changed;
      out.push(r.rows);
    }
    return out;
  };
}

/**
 * `raw` (drizzle's transaction object, whose prototype is its builder) given the Db's members around `run`; `write`,
 * the engine's own way of running a write's statements on the transaction (pipelined on PostgreSQL), else one by one.
 */
export function transactionDb(raw: object, db: Db, run: RunInTransaction, write: (queries: SQL[]) => Promise<Row[][]> = sequentialWrite(run)): Db {
  const { d, t, close, checkpoint, compact, size, onTiming, insertSubscriber, $path, $created } = db;
  const tx: Db = Object.assign(raw, {
    d, t, close, checkpoint, compact, size, onTiming, insertSubscriber, $path, $created,
    rows: async <T>(q: SQL) => (await run(q, 0)).rows as T[],
    exec: async (q: SQL) => ({ changed: (await run(q, 0)).changed }),
    write,
    // nested: part of the transaction in hand, as durable as it is
    tx: <T>(fn: (inner: Db) => Promise<T>) => fn(tx),
    changeStamp: () => null,
    ownCommits: null,
  }) as unknown as Db;
  return tx;
}
