// What tells the embedded database's commits apart (issue 19): the WAL index header, read at most once per
// event-loop turn, or PRAGMA data_version where that can't be used.
import { fstatSync, openSync, readSync, statSync } from "node:fs";
import Database from "libsql";
import type { ChangeStamp } from "../db";

/**
 * The stamp read at most once per event-loop turn (a pread each was 7% of a published page's time): what another
 * instance commits is seen from the next turn on, that is by any request that reached this one after the commit; this
 * process's own writes forget it as each ends (`createGroupWriter`'s `written`), so a request reads its own writes.
 * No answer (a commit under way) is not kept.
 */
export function oncePerTurn(stamp: () => ChangeStamp): { read: () => ChangeStamp; forget: () => void } {
  let kept: ChangeStamp = null;
  const forget = () => {
    kept = null;
  };
  return {
    read: () => {
      if (kept !== null) return kept;
      kept = stamp();
      if (kept !== null) setImmediate(forget);
      return kept;
    },
    forget,
  };
}

/**
 * What changes with every commit to the database file, by any connection of any process (issue 19), read before
 * each cached read: the WAL index header at the start of the `-shm` file (~100 bytes, one pread; SQLite's
 * documented wal-index format, sqlite.org/walformat.html): two copies of a 48-byte header (version 3007000;
 * `iChange` at byte 8 counts transactions, `mxFrame` at 16, a salt at 32), written copy 2 first, so equal copies
 * are a consistent read; unequal ones (a commit under way) answer null: read afresh. Where that cannot be used,
 * PRAGMA data_version on a connection of its own (~10 us under load: it opens a read transaction, with file locks).
 */
export function changeProbe(path: string): { stamp: () => string | number | null; close: () => void; counts?: true } {
  return walIndexStamp(`${path}-shm`) ?? dataVersionStamp(path);
}

/**
 * Reads the WAL index's first 100 bytes (its two header copies, then the checkpoint's `nBackfill`) into one buffer,
 * read again at each call; null where they can't be read or the copies differ in `iChange`, `mxFrame` or the salt
 * (a commit under way).
 */
function indexReader(fd: number): () => DataView | null {
  const bytes = new Uint8Array(100);
  const view = new DataView(bytes.buffer);
  const word = (at: number) => view.getUint32(at, true);
  return () => {
    try {
      if (readSync(fd, bytes, 0, 100, 0) !== 100) return null;
    } catch {
      return null;
    }
    return word(8) === word(56) && word(16) === word(64) && word(32) === word(80) ? view : null;
  };
}

/** The WAL index header's transaction counter, frame count and salt; null where the header can't be read as expected. */
function walIndexStamp(shm: string): { stamp: () => string | null; close: () => void; counts: true } | null {
  const fd = walIndexFd(shm);
  if (fd === null) return null;
  const read = indexReader(fd);
  const first = read();
  if (!first || first.getUint32(0, true) !== 3007000 || first.getUint8(12) !== 1) return null;
  return {
    stamp: () => {
      const index = read();
      return index && `${index.getUint32(8, true)}:${index.getUint32(16, true)}:${index.getUint32(32, true)}`;
    },
    // the descriptor stays open (walIndexFd)
    close: () => {},
    // its stamps start with the transaction counter (own-commits.ts)
    counts: true,
  };
}

/**
 * Whether every frame of the WAL has been copied into the database file (issue 47: then the next write starts the WAL
 * over): the header's `mxFrame` (byte 16) against the checkpoint's `nBackfill` (byte 96, the first word after the
 * two header copies; sqlite.org/walformat.html). Null where the index can't be read as expected or a commit is under
 * way.
 */
export function walCopied(path: string): boolean | null {
  const fd = walIndexFd(`${path}-shm`);
  const index = fd === null ? null : indexReader(fd)();
  if (!index || index.getUint32(0, true) !== 3007000) return null;
  return index.getUint32(96, true) === index.getUint32(16, true);
}

/** PRAGMA data_version on a connection of its own, which never writes. */
function dataVersionStamp(path: string): { stamp: () => number | null; close: () => void } {
  // no busy timeout: a busy moment answers null (read afresh) rather than stalling the event loop
  const conn = new Database(path);
  const version = conn.prepare("PRAGMA data_version");
  version.raw(true);
  return {
    stamp: () => {
      try {
        return Number((version.get() as [number])[0]);
      } catch {
        return null;
      }
    },
    close: () => conn.close(),
  };
}

/**
 * A descriptor of the WAL index, opened once per file and never closed: closing any descriptor of a file drops
 * every POSIX lock this process holds on it, SQLite's own included, and another process would then take the
 * index as abandoned and truncate it under the running server (a first version that mapped the file with
 * Bun.mmap, which closes its descriptor, did exactly that: SIGBUS in a two-instance test). Kept per inode, so a
 * file deleted and made again gets a new descriptor.
 */
const walIndexFds = new Map<string, number>();
function walIndexFd(shm: string): number | null {
  try {
    const inode = statSync(shm).ino;
    const key = `${shm}\0${inode}`;
    let fd = walIndexFds.get(key);
    if (fd === undefined) {
      fd = openSync(shm, "r");
      if (fstatSync(fd).ino !== inode) return null; // replaced in between: leave the descriptor open, as ever
      walIndexFds.set(key, fd);
    }
    return fd;
  } catch {
    return null;
  }
}
