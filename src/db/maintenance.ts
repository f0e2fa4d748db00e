// Upkeep of the embedded database file (nothing of it applies to PostgreSQL, which keeps its own): WAL checkpoints, incremental vacuum and the sizes doctor and /metrics show.
import { statSync } from "node:fs";
import { databasePath, type Db } from "./client";

export interface DatabaseFileSizes {
  path: string;
  /** The main database file. */
  fileBytes: number;
  /** The write-ahead log beside it (0 when absent, e.g. after a clean stop). */
  walBytes: number;
}

const sizeOf = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Sizes of an embedded database's file and WAL; null for a database server. Cheap (two stat calls). */
export function databaseFileSizes(config: { databaseUrl: string }): DatabaseFileSizes | null {
  const path = databasePath(config.databaseUrl);
  if (!path) return null;
  return { path, fileBytes: sizeOf(path), walBytes: sizeOf(`${path}-wal`) };
}

/** Folds the WAL into the database file and empties it, so the file alone is complete. Returns false if a reader kept it busy. */
export async function checkpoint(db: Db): Promise<boolean> {
  if (db.d.name !== "sqlite" || !db.$path) return true;
  // under the writer's lock: it waits for writers, and would wait for an interactive transaction synchronously
  const r = await db.$writer.exclusive(() => db.$client.execute("PRAGMA wal_checkpoint(TRUNCATE)"));
  return Number(r.rows[0]?.[0] ?? 0) === 0;
}

/**
 * Nightly compaction: hands the pages freed by the pruning jobs back to the file system (auto_vacuum=INCREMENTAL,
 * migration 0012) and truncates the WAL. Returns how many free pages were released.
 */
export async function compactDatabase(db: Db): Promise<{ freedPages: number }> {
  if (db.d.name !== "sqlite" || !db.$path) return { freedPages: 0 };
  const before = Number((await db.$client.execute("PRAGMA freelist_count")).rows[0]?.[0] ?? 0);
  // executeMultiple steps the pragma to the end; execute() steps it once (one page) and leaves it holding the lock
  await db.$writer.exclusive(() => db.$client.executeMultiple("PRAGMA incremental_vacuum;"));
  await checkpoint(db);
  const after = Number((await db.$client.execute("PRAGMA freelist_count")).rows[0]?.[0] ?? 0);
  return { freedPages: before - after };
}
