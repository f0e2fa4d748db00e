// Opens a Store for a database URL: `file:` is embedded libSQL, `postgres://` / `postgresql://` is PostgreSQL.
import { openDatabase } from "./client";
import type { Store } from "./store";

export interface OpenStore {
  store: Store;
  close(): Promise<void>;
}

export async function openStore(url: string, opts: { poolSize?: number; statementTimeoutMs?: number } = {}): Promise<OpenStore> {
  const db = await openDatabase({ url, poolSize: opts.poolSize ?? 4, statementTimeoutMs: opts.statementTimeoutMs ?? 60_000 });
  return { store: db, close: () => db.close() };
}
