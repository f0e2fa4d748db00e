// The one engine switch: a `postgres://` URL opens PostgreSQL (pg/), anything else the embedded libSQL file
// (sqlite/). Everything past this point sees a Db and never asks which engine it is.
import { stderrLogger } from "../log";
import type { Db } from "./db";
import { foldExistingNames } from "./fold-names";
import { openSqliteDb } from "./sqlite/open";
import { isPgUrl } from "./url";

export type { Db } from "./db";
export { DatabaseOpenError } from "./errors";
export { SCHEMA_VERSION } from "./sqlite/migrate";
export { removeCreatedFiles } from "./sqlite/open";
export { databasePath, displayUrl, isPgUrl } from "./url";

export interface DbSettings {
  url: string;
  /** PostgreSQL connections. */
  poolSize?: number;
  /** The embedded file's `synchronous`. */
  sync?: "full" | "normal";
  /** PostgreSQL: longest a statement may run before the server cancels it. */
  statementTimeoutMs?: number;
  /** Where start-up's notes about the data go (a name renamed by the folded-name rule); stderr by default. */
  warn?: (message: string, fields?: Record<string, unknown>) => void;
}

export async function openDatabase(settings: DbSettings): Promise<Db> {
  const db = await openEngine(settings);
  try {
    // the part of a migration SQL can't do: keys computed in code (issue 44)
    await foldExistingNames(db, settings.warn ?? stderrLogger("warn").warn);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

async function openEngine(settings: DbSettings): Promise<Db> {
  // PostgreSQL's driver and schema are loaded only for a PostgreSQL URL (a command on a file starts sooner)
  if (isPgUrl(settings.url)) {
    const { openPgDb } = await import("./pg/open");
    return openPgDb({ url: settings.url, poolSize: settings.poolSize ?? 10, statementTimeoutMs: settings.statementTimeoutMs ?? 30_000 });
  }
  return openSqliteDb(settings);
}
