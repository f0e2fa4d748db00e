// Group commit: concurrent write batches that arrive in the same event-loop turn share one transaction
// (and one WAL fsync), each inside its own SAVEPOINT so a failing batch is rolled back alone.
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
}

const MAX_GROUP = 256;

export function createGroupWriter(client: Client): GroupWriter {
  let queue: Item[] = [];
  let busy = false;

  async function flush(): Promise<void> {
    const items = queue.splice(0, MAX_GROUP);
    const outcomes: ({ ok: true; results: ResultSet[] } | { ok: false; error: unknown })[] = [];
    try {
      const tx = await client.transaction("write");
      try {
        for (const item of items) {
          await tx.execute("SAVEPOINT grouped");
          try {
            const results: ResultSet[] = [];
            for (const statement of item.statements) results.push(await tx.execute(statement));
            await tx.execute("RELEASE grouped");
            outcomes.push({ ok: true, results });
          } catch (error) {
            await tx.execute("ROLLBACK TO grouped");
            await tx.execute("RELEASE grouped");
            outcomes.push({ ok: false, error });
          }
        }
        await tx.commit();
      } finally {
        tx.close();
      }
      items.forEach((item, i) => {
        const o = outcomes[i];
        if (o.ok) item.resolve(o.results);
        else item.reject(o.error);
      });
    } catch (error) {
      // the transaction itself failed (begin or commit): nothing of this group was written
      for (const item of items) item.reject(error);
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
    write(statements) {
      return new Promise<ResultSet[]>((resolve, reject) => {
        queue.push({ statements, resolve, reject });
        // wait for this turn's other requests to join, unless a group is already running (it picks this up)
        if (!busy && queue.length === 1) setImmediate(() => void drainQueue());
      });
    },
  };
}
