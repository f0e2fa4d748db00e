// SQLite's group commit: one write transaction at a time on the embedded file's own writer connection (file-writer.ts)
// or on the client's pool (an in-memory database), with the interactive transactions (`db.tx`) queued behind the
// same lock, and every other write of the client routed through it.
import type { Client, InArgs, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import type { ChangeStamp } from "../db";
import { createGroupCommit } from "../group-commit";
import type { FileWriter } from "./file-writer";
import { transactionCount, type OwnCommits } from "./own-commits";
import { writes, writtenBy, type Written } from "./writes";

export interface GroupWriter {
  /** Runs the statements atomically (with the other batches of this turn), in order; resolves their results. */
  write(statements: InStatement[]): Promise<ResultSet[]>;
  /**
   * Runs `fn` while no group (and no other `exclusive` call) holds the write lock: the interactive transactions
   * (`db.tx`) go through here. The driver waits for SQLite's lock synchronously, so a second writer of this
   * process would block the event loop until the busy timeout while the first could never finish.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

/** One holder at a time, first come first served. */
function createMutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.then(
      () => {},
      () => {},
    );
    return run;
  };
}

/** The statements in one write transaction on a connection of the client's pool (an in-memory database, a libSQL server). */
export async function clientTransaction(client: Client, statements: InStatement[]): Promise<ResultSet[]> {
  const tx = await client.transaction("write");
  try {
    const results = await tx.batch(statements);
    await tx.commit();
    return results;
  } finally {
    tx.close();
  }
}

/**
 * SQLite's group commit: one group at a time (a second write transaction opened from this thread would wait on the
 * first), on the file's own writer connection (file-writer.ts), or else as one batch of the client's (one round trip
 * on a libSQL server). `written` is told when each write (a group, or an exclusive transaction) has ended, before its
 * callers go on.
 */
export function createGroupWriter(
  client: Client,
  options: { observe?: { stamp: () => ChangeStamp; commits: OwnCommits }; written?: () => void; file?: FileWriter } = {},
): GroupWriter {
  const { observe, written, file } = options;
  const mutex = createMutex();
  const locked = <T>(fn: () => Promise<T>) =>
    mutex(async () => {
      try {
        return await fn();
      } finally {
        written?.();
      }
    });

  async function runGroup(batches: InStatement[][]): Promise<ResultSet[][]> {
    const statements = batches.flat();
    let results: ResultSet[];
    let before: ChangeStamp | undefined;
    let wrote: Written | null = null;
    if (file) {
      // the stamp read with the write lock held, right before the COMMIT: no other commit can come between them, and
      // the commit is announced as under way (own-commits.ts), so a request that reads its stamp before this group
      // has heard of it still finds it
      const beforeCommit = observe
        ? (done: ResultSet[]) => {
            before = observe.stamp();
            wrote = groupWrote(statements, done);
            if (wrote && typeof before === "string") observe.commits.underWay({ before, written: wrote });
          }
        : undefined;
      try {
        results = await file.transaction(statements, beforeCommit);
      } finally {
        observe?.commits.underWay(null);
      }
    } else {
      before = observe?.stamp();
      results = await clientTransaction(client, statements);
      if (observe) wrote = groupWrote(statements, results);
    }
    if (observe) noteCommit(observe, before, wrote);
    let at = 0;
    return batches.map((statements) => results.slice(at, (at += statements.length)));
  }

  return {
    exclusive: (fn) => locked(fn),
    write: createGroupCommit((batches: InStatement[][]) => locked(() => runGroup(batches)), { concurrency: 1, nextTurn: file !== undefined }),
  };
}

const textOf = (s: InStatement) => (typeof s === "string" ? s : s.sql);

/** What a group wrote (own-commits.ts), or null when it changed no row: a group that changed nothing commits nothing. */
function groupWrote(statements: InStatement[], results: ResultSet[]): Written | null {
  const changed = statements.some((s, i) => writes(textOf(s)) && (results[i].rowsAffected > 0 || results[i].rows.length > 0));
  return changed ? writtenBy(statements.map(textOf)) : null;
}

/**
 * Records a group's commit as this process's own (own-commits.ts) when the stamps show exactly one transaction
 * between them, and the group changed a row, so that transaction was its own: a single transaction in between would
 * otherwise be another process's.
 */
function noteCommit(observe: { stamp: () => ChangeStamp; commits: OwnCommits }, before: ChangeStamp | undefined, wrote: Written | null) {
  const after = observe.stamp();
  const from = transactionCount(before ?? null);
  const to = transactionCount(after);
  if (from === null || to !== from + 1 || !wrote) return;
  observe.commits.record(before as string, after as string, wrote);
}


/**
 * Sends every other write made through the client (drizzle's builder, the Store's `exec`, a `rows` that writes)
 * through the group commit, where it waits its turn without blocking anything. Straight on the client, such a write
 * waited for SQLite's lock synchronously: while an interactive transaction (`exclusive`) held the lock across an
 * await, the event loop stood still until the busy timeout, and the write failed (SQLITE_BUSY), the transaction
 * with it (15 s in the test that shows it). The group commit's own transactions don't go through `execute` or
 * `batch`, and reads stay as they were.
 */
export function routeWrites(client: Client, writer: GroupWriter): void {
  const execute = client.execute.bind(client) as (stmt: InStatement) => Promise<ResultSet>;
  const batch = client.batch.bind(client);
  client.execute = ((stmtOrSql: InStatement, args?: InArgs) => {
    const stmt = typeof stmtOrSql === "string" ? { sql: stmtOrSql, args: args ?? [] } : stmtOrSql;
    return writes(stmt.sql) ? writer.write([stmt]).then((r) => r[0]) : execute(stmt);
  }) as Client["execute"];
  client.batch = ((stmts: InStatement[], mode?: TransactionMode) =>
    stmts.some((s) => writes(textOf(s))) ? writer.write(stmts) : batch(stmts, mode)) as Client["batch"];
}
