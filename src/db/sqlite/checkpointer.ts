// WAL checkpoints off the writers' path (issue 47). SQLite's automatic checkpoint runs inside the COMMIT that takes
// the WAL past 1,000 pages, so that commit (a group's, or an import batch's) held the writer's lock while the pages
// were copied into the file and it was synced: 10-75 ms under an import, and every sign-up queued behind it. Here the
// connections make none (`wal_autocheckpoint = 0`, set with their other pragmas in open.ts), and after writes a
// PASSIVE checkpoint runs on a connection of its own on the driver's thread pool: it takes no writer's lock, so
// writers go on appending meanwhile, and the event loop goes on serving.
//
// Under writes that never pause (a large import) a PASSIVE checkpoint never catches up: commits land while it copies,
// so no write ever finds the WAL wholly copied, which is when SQLite starts it over from its beginning, and it grew
// without bound (1.8 GB in a 1,000,000-row import). So a checkpoint runs with this process's background work held
// (background.ts: an import's batches wait, requests' writes go on), pass after pass until the WAL index says every
// frame is copied (at most CATCH_UP_PASSES): then the next write starts the WAL over. An import's WAL went from 64 MB
// a second to what 200 ms of it writes. Should the WAL still pass WAL_LIMIT (writes of another process, or requests'
// writes that never pause), a checkpoint runs with this process's writers held (`exclusive`): it copies only what
// came since the last one, and the next write starts the WAL over; `journal_size_limit` (open.ts) then cuts the file
// back to WAL_LIMIT. Those held sign-ups for 15-35 ms once a second through an import.
import Database from "libsql";
import AsyncDatabase from "libsql/promise";
import { sizeOf } from "./maintenance";
import { holdBackground } from "../../background";
import { walCopied } from "./change-stamp";

/** At most one checkpoint this often: each copies what was committed since the last one. */
const EVERY_MS = 200;
/** Passes of one checkpoint at most, each copying what the writes during the last one added. */
const CATCH_UP_PASSES = 5;
/** The WAL file's size past which a checkpoint holds the writers so that the WAL can start over. */
export const WAL_LIMIT = 64 * 1024 * 1024;

const asyncExec = AsyncDatabase.prototype.exec as (this: { db: unknown }, sql: string) => Promise<void>;

export interface Checkpointer {
  /** A write ended: a checkpoint starts unless one ran less than EVERY_MS ago or is under way (then one follows it). */
  written(): void;
  /**
   * Runs `fn` (a checkpoint of its own: TRUNCATE at a stop, the nightly compaction) with none of these under way or
   * starting: a PASSIVE one running beside it would make it answer busy.
   */
  alone<T>(fn: () => Promise<T>): Promise<T>;
  /** Waits for a checkpoint under way; closes the connection. */
  close(): Promise<void>;
}

export function checkpointer(
  path: string,
  timeout: number,
  warn?: (message: string, fields?: Record<string, unknown>) => void,
  exclusive?: <T>(fn: () => Promise<T>) => Promise<T>,
): Checkpointer {
  let conn: Database.Database | null = null;
  let running: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** A write ended while one was under way: another follows it. */
  let again = false;
  let last = 0;
  let closed = false;
  let paused = 0;

  const schedule = () => {
    if (closed || timer) return;
    if (running) {
      again = true;
      return;
    }
    const wait = EVERY_MS - (performance.now() - last);
    if (wait <= 0) return run();
    timer = setTimeout(run, wait);
    timer.unref?.();
  };

  const run = () => {
    timer = null;
    if (closed || running || paused > 0) return;
    last = performance.now();
    // its first statement through `prepare` sets the connection up as every other (statement-cache.ts): its
    // synchronous level, so the file is synced before the WAL may start over
    conn ??= (() => {
      const c = new Database(path, { timeout } as any);
      c.prepare("SELECT 1").get();
      return c;
    })();
    const passive = () => asyncExec.call({ db: (conn as unknown as { db: unknown }).db }, "PRAGMA wal_checkpoint(PASSIVE)");
    // a first pass with everything going on; then, with this process's background work held, pass after pass until
    // the WAL index says every frame is copied: then the next write starts the WAL over. The requests' writes go on
    // meanwhile. (Counting the writes that ended during a pass missed a COMMIT still on the driver's thread.)
    const catchUp = async () => {
      for (let pass = 0; pass < CATCH_UP_PASSES; pass++) {
        await passive();
        if (walCopied(path)) return;
      }
    };
    running = passive()
      .then(() => (walCopied(path) === true ? undefined : holdBackground(catchUp)))
      .then(() => (exclusive && sizeOf(`${path}-wal`) > WAL_LIMIT ? exclusive(passive) : undefined))
      .catch((err: unknown) => warn?.("checkpoint failed", { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          schedule();
        }
      });
  };

  return {
    written: schedule,
    async alone(fn) {
      paused++;
      try {
        await running;
        return await fn();
      } finally {
        paused--;
      }
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
      conn?.close();
      conn = null;
    },
  };
}
