// Upkeep of the embedded database file (nothing of it applies to PostgreSQL, which keeps its own): WAL checkpoints, incremental vacuum and the sizes doctor and /metrics show.
import { statSync } from "node:fs";
import type { Client } from "@libsql/client";
import { databasePath } from "../url";
import type { GroupWriter } from "./group-writer";

/** What upkeep needs of an open embedded file. */
interface Open {
  client: Client;
  writer: GroupWriter;
  path: string | null;
}

/** A file's size in bytes; 0 when it is absent. */
export const sizeOf = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** An embedded database's file and write-ahead log, in bytes (the WAL 0 when absent, e.g. after a clean stop). */
export interface DatabaseFileSizes {
  path: string;
  fileBytes: number;
  walBytes: number;
}

/** Sizes of the database file at `path` and of its WAL. Cheap (two stat calls). */
export const fileSizes = (path: string): DatabaseFileSizes => ({ path, fileBytes: sizeOf(path), walBytes: sizeOf(`${path}-wal`) });

/** The same for a database URL; null for a database server. */
export function databaseFileSizes(config: { databaseUrl: string }): DatabaseFileSizes | null {
  const path = databasePath(config.databaseUrl);
  return path ? fileSizes(path) : null;
}

/** Folds the WAL into the database file and empties it, so the file alone is complete. Returns false if a reader kept it busy. */
export async function checkpoint({ client, writer, path }: Open): Promise<boolean> {
  if (!path) return true;
  // under the writer's lock: it waits for writers, and would wait for an interactive transaction synchronously
  const r = await writer.exclusive(() => client.execute("PRAGMA wal_checkpoint(TRUNCATE)"));
  return Number(r.rows[0]?.[0] ?? 0) === 0;
}

/**
 * Nightly compaction: hands the pages freed by the pruning jobs back to the file system (auto_vacuum=INCREMENTAL,
 * migration 0012) and truncates the WAL. Returns how many free pages were released.
 */
export async function compactDatabase(open: Open): Promise<{ freedPages: number }> {
  const { client, writer, path } = open;
  if (!path) return { freedPages: 0 };
  const before = Number((await client.execute("PRAGMA freelist_count")).rows[0]?.[0] ?? 0);
  // executeMultiple steps the pragma to the end; execute() steps it once (one page) and leaves it holding the lock
  await writer.exclusive(() => client.executeMultiple("PRAGMA incremental_vacuum;"));
  await checkpoint(open);
  const after = Number((await client.execute("PRAGMA freelist_count")).rows[0]?.[0] ?? 0);
  return { freedPages: before - after };
}
