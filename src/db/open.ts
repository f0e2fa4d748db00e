// Opens a Store for a database URL: `file:` is embedded libSQL, `postgres://` / `postgresql://` is PostgreSQL.
import { openDatabase } from "./client";
import { openPg } from "./pg";
import { sqliteStore } from "./sqlite-store";
import type { Store } from "./store";

export interface OpenStore {
  store: Store;
  close(): Promise<void>;
}

export const isPgUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

export async function openStore(url: string, opts: { poolSize?: number; statementTimeoutMs?: number } = {}): Promise<OpenStore> {
  if (isPgUrl(url)) {
    const { client, store } = await openPg({ url, poolSize: opts.poolSize ?? 4, statementTimeoutMs: opts.statementTimeoutMs ?? 60_000 });
    return { store, close: () => client.end() };
  }
  const db = await openDatabase({ url, authToken: null });
  return { store: sqliteStore(db), close: async () => db.$client.close() };
}
