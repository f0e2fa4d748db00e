// Group commit, on either engine: concurrent write batches that arrive in the same event-loop turn share one
// transaction (one commit, one fsync). If the group fails, its batches rerun one transaction each, so only the
// failing one fails (failures are rare: a token collision, a bug); an error that dooms them all (a lost
// connection) rejects the whole group instead. The engine supplies "run these batches in one transaction".

interface Item<B, R> {
  batch: B;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /** Groups running at once (each its own transaction). */
  concurrency: number;
  /** True for an error every batch of the group would meet alone too: reject them all rather than rerun each. */
  failsEveryBatch?: (err: unknown) => boolean;
  /**
   * What queued while a group ran starts on the next turn rather than at once: for groups whose statements run
   * synchronously on the event loop (the embedded file's writer), so that the callers of the group that just
   * committed answer first. Where a group's statements are network round trips (PostgreSQL), at once.
   */
  nextTurn?: boolean;
}

/** The most batches one transaction takes: a group holds its locks (a line's row on PostgreSQL) until it commits. */
export const MAX_GROUP = 256;

/**
 * Queues batches and runs each event-loop turn's together through `runTogether`, which runs its batches in order in
 * one transaction and resolves their results in order, or throws having rolled back. Resolves a batch's promise
 * only after its group committed.
 */
export function createGroupCommit<B, R>(runTogether: (batches: B[]) => Promise<R[]>, options: GroupCommitOptions): (batch: B) => Promise<R> {
  const queue: Item<B, R>[] = [];
  let running = 0;
  let scheduled = false;

  async function flush(items: Item<B, R>[]): Promise<void> {
    try {
      const all = await runTogether(items.map((item) => item.batch));
      items.forEach((item, i) => item.resolve(all[i]));
    } catch (groupError) {
      if (items.length === 1 || options.failsEveryBatch?.(groupError)) return items.forEach((item) => item.reject(groupError));
      for (const item of items) {
        try {
          item.resolve((await runTogether([item.batch]))[0]);
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }

  function startGroups() {
    scheduled = false;
    while (running < options.concurrency && queue.length) {
      running++;
      void flush(queue.splice(0, MAX_GROUP)).finally(() => {
        running--;
        // what queued while this group ran has waited a turn already: it goes at once, or (nextTurn) after every
        // caller of the group that just committed has answered (their continuations are microtasks, and the next
        // group's synchronous statements would run before them) and what arrives meanwhile has joined it. At once,
        // the embedded file's sign-up throughput with the COMMIT off the thread was 0.86-0.90 of this (bench/ab.ts).
        if (!options.nextTurn) startGroups();
        else if (queue.length) schedule();
      });
    }
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(startGroups);
  }

  return (batch) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ batch, resolve, reject });
      // wait for this turn's other writes to join, unless every slot is busy (a finishing group picks this up)
      if (running < options.concurrency) schedule();
    });
}
