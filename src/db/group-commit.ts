// Group commit: concurrent write batches that arrive in the same event-loop turn share one transaction
// (and one WAL fsync). If any batch fails, the group is rolled back and its batches rerun one
// transaction each, so only the failing one fails (failures are rare: a token collision, a bug).
// One group at a time: a second write transaction opened from this thread would wait on the first.
import type { Client, InStatement, ResultSet } from "@libsql/client";

interface Item {
  statements: InStatement[];
  resolve: (results: ResultSet[]) => void;
  reject: (err: unknown) => void;
}

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

const MAX_GROUP = 256;

export function createGroupWriter(client: Client): GroupWriter {
  let queue: Item[] = [];
  let busy = false;
  const locked = createMutex();

  /** Runs the items in one transaction and one batch (one round trip on a server); throws (having rolled back) if any fails. */
  const runTogether = (items: Item[]) => locked(() => runGroup(items));

  async function runGroup(items: Item[]): Promise<ResultSet[][]> {
    const tx = await client.transaction("write");
    try {
      const results = await tx.batch(items.flatMap((item) => item.statements));
      await tx.commit();
      let at = 0;
      return items.map((item) => results.slice(at, (at += item.statements.length)));
    } finally {
      tx.close();
    }
  }

  async function flush(): Promise<void> {
    const items = queue.splice(0, MAX_GROUP);
    try {
      const all = await runTogether(items);
      items.forEach((item, i) => item.resolve(all[i]));
    } catch (groupError) {
      if (items.length === 1) return items[0].reject(groupError);
      for (const item of items) {
        try {
          item.resolve((await runTogether([item]))[0]);
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }

  async function drainQueue() {
    busy = true;
    try {
      while (queue.length) await flush();
    } finally {
      busy = false;
    }
  }

  return {
    exclusive: (fn) => locked(fn),
    write(statements) {
      return new Promise<ResultSet[]>((resolve, reject) => {
        queue.push({ statements, resolve, reject });
        // wait for this turn's other requests to join, unless a group is already running (it picks this up)
        if (!busy && queue.length === 1) setImmediate(() => void drainQueue());
      });
    },
  };
}
