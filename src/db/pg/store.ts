// The Store on PostgreSQL: statements as named prepared statements, a turn's write batches of one waitlist in one
// transaction (group-commit.ts) in one lock order, run again whole on a serialization failure or deadlock; and an
// interactive transaction dressed as a Db.
import { fillPlaceholders, Placeholder, type SQL } from "drizzle-orm";
import type { SQL as Sql } from "bun";
import type { Db } from "../db";
import { isDatabaseUnavailable } from "../errors";
import { createGroupCommit } from "../group-commit";
import { signUpInserts } from "../sign-ups";
import { keyOf, lineOf, type Row, type Store } from "../store";
import { transactionDb } from "../transaction";
import { pgDialect } from "./dialect";
import { renderPg } from "./render";
import type { Flat } from "../flatten";

const RETRIES = 5;

/**
 * A drizzle transaction dressed as a Db: statements run in order on its connection; a write's statements go out
 * without waiting for each answer, as a group's do (writeGroup), only one that needs the count of the one before it
 * waits for that (an import's batch of a few hundred statements: one round trip each was most of its time).
 */
export function pgTx(raw: object, conn: Sql, db: Db): Db {
  const pipelined = async (queries: SQL[]): Promise<Row[][]> => {
    const sent: Promise<Answer>[] = [];
    for (const [k, query] of queries.entries()) {
      const flat = renderPg(query);
      const prev = k > 0 && needsPrevChanged(flat) ? changedOf(await sent[k - 1]!) : 0;
      const answer = run(conn, flat.sql, valuesOf(flat, prev));
      answer.catch(quiet);
      sent.push(answer);
    }
    const out: Row[][] = [];
    for (const answer of sent) out.push([...(await answer)] as Row[]);
    return out;
  };
  return transactionDb(
    raw,
    db,
    async (q, prev) => {
      const r = await exec(conn, q, prev);
      return { rows: [...r] as Row[], changed: changedOf(r) };
    },
    pipelined,
  );
}

export async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= RETRIES || !pgDialect.isRetryable(err)) throw err;
      await Bun.sleep(Math.random() * 10 * attempt);
    }
  }
}

/** A statement's answer: its rows; `count`, the rows it wrote or returned; `columns`, their names and type OIDs. */
type Answer = Row[] & { count: number; columns?: { name: string; type: number }[] };

/** int8 and numeric: the driver gives their text, and counts, sums and ms times (all within 2^53) are numbers here. */
const AS_NUMBER = new Set([20, 1700]);

function withNumbers(answer: Answer): Answer {
  const columns = answer.columns?.filter((c) => AS_NUMBER.has(c.type));
  if (!columns?.length) return answer;
  for (const row of answer) for (const { name } of columns) if (typeof row[name] === "string") row[name] = Number(row[name]);
  return answer;
}

/**
 * One statement, as a named prepared statement (the client's `prepare` default, kept per connection by text):
 * an unnamed one is parsed and planned anew each time and ends pipelining; prepared, a transaction's statements go
 * out without waiting for each answer (60 inserts with their BEGIN and COMMIT: 1.7-3.1 ms). Bun's queries are lazy:
 * `.then` sends this one, so statements go out in the order of these calls.
 */
const run = (db: Sql, text: string, params: unknown[]): Promise<Answer> => db.unsafe<Answer>(text, params).then(withNumbers);

const exec = (db: Sql, query: SQL, prev = 0) => {
  const flat = renderPg(query);
  return run(db, flat.sql, valuesOf(flat, prev));
};
const changedOf = (r: { count: number; length: number }) => Math.max(r.count ?? 0, r.length);

/**
 * The order a group (the batches of one line, see pgStore) runs its batches in: by the key each locks (`d.lockKey`,
 * the confirmation caps of an address), then as they came. Every group of a line holds the line's row first, so
 * two groups of different lines that both lock keys lock them in one order and never wait on each other in a circle.
 */
function lockOrder(batches: SQL[][]): number[] {
  const keys = batches.map(keyOf);
  // most groups lock no key (a line's confirmed sign-ups): as they came
  if (keys.every((k) => k === undefined)) return keys.map((_, i) => i);
  const rank = (i: number) => keys[i] ?? "\uffff";
  return batches.map((_, i) => i).sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : a - b));
}

/** A statement that needs the row count of the one before it (`d.prevChanged`). */
const needsPrevChanged = (flat: Flat) => flat.placeholders && flat.params.some((p) => p instanceof Placeholder && p.name === "prev_changed");
/** A statement's values, its placeholder (if any) filled with the row count of the statement before it. */
const valuesOf = (flat: Flat, prev: number) => (flat.placeholders ? fillPlaceholders(flat.params, { prev_changed: prev }) : flat.params);
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
      client.begin(async (conn) => {
        const sent: { batch: number; answer: Promise<Answer> }[] = [];
        // each is awaited below, in order; the catch keeps the ones aborted after a failure quiet
        const send = (batch: number, answer: Promise<Answer>) => sent.push({ batch, answer: (answer.catch(quiet), answer) });
        for (const i of order) {
          for (const [k, query] of batches[i].entries()) {
            const flat = renderPg(query);
            const prev = k > 0 && needsPrevChanged(flat) ? changedOf(await sent[sent.length - 1].answer) : 0;
            send(i, run(conn, flat.sql, valuesOf(flat, prev)));
          }
        }
        const results: Row[][][] = batches.map(() => []);
        for (const { batch, answer } of sent) {
          const rows = [...(await answer)];
          results[batch].push(rows);
        }
        return results;
      }) as Promise<Row[][][]>,
  );
}

/**
 * Writes in one lock order per waitlist (issue 43). The batches that start by locking a waitlist's line (`locksLine`)
 * are grouped per line: a turn's batches of one line share one transaction (one commit), one group of a line at a
 * time on this instance, and the lines' groups run at once on the pool's connections. Any other batch (a rate-limit
 * count, a page view, an outbox claim, a heartbeat) is a transaction of its own, and never waits behind a line.
 * Every write that changes a ranked subscriber locks its line first (subscribers/lock.ts), and what a batch locks
 * after it (the rank counters, the daily count, the waitlist's counters, through the triggers) only a holder of that
 * line locks too; so no two writes wait on each other in a circle, whichever instances make them. A group is run
 * again whole on a serialization failure or deadlock; a lost connection fails every batch of it (each answered 503).
 */
export function pgStore(client: Sql): Store {
  const lines = new Map<string, (batch: SQL[]) => Promise<Row[][]>>();
  const lineGroup = (line: string) => {
    let group = lines.get(line);
    if (!group) {
      group = createGroupCommit((batches: SQL[][]) => writeGroup(client, batches), { concurrency: 1, failsEveryBatch: isDatabaseUnavailable });
      // a line's queue is a few fields; a process sees as many as it has waitlists written to
      lines.set(line, group);
    }
    return group;
  };
  const write = (batch: SQL[]): Promise<Row[][]> => {
    const line = lineOf(batch);
    return line === undefined ? writeGroup(client, [batch]).then((r) => r[0]) : lineGroup(line)(batch);
  };
  return {
    d: pgDialect,
    async rows<T>(query: SQL) {
      return [...(await exec(client, query))] as T[];
    },
    async exec(query: SQL) {
      return { changed: changedOf(await exec(client, query)) };
    },
    write,
    insertSubscriber: signUpInserts(),
  };
}
