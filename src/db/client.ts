// Opens the libSQL database (embedded file or server), sets the pragmas, applies the embedded migrations.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client, type InStatement } from "@libsql/client";
import { SQL as DrizzleSQL, StringChunk, type SQL } from "drizzle-orm";
import { createGroupWriter, type GroupWriter } from "./group-commit";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrations } from "./migrations.gen";
import * as schema from "./schema";
import { cacheStatements } from "./statement-cache";

export type Db = LibSQLDatabase<typeof schema> & { $client: Client; $writer: GroupWriter };

const UNUSUAL = Symbol("unusual chunk");

/**
 * A drizzle `sql` fragment as a libSQL statement (for the group writer). Our raw statements hold
 * only text, values and nested fragments, which this flattens directly (drizzle's general builder
 * was ~8% of a sign-up); anything else (columns, tables, placeholders) goes through drizzle.
 */
export const toStatement = (db: Db, query: SQL): InStatement => {
  const parts: string[] = [];
  const args: any[] = [];
  const walk = (chunks: unknown[]) => {
    for (const chunk of chunks) {
      if (chunk instanceof StringChunk) parts.push(...chunk.value);
      else if (chunk instanceof DrizzleSQL) walk(chunk.queryChunks);
      else if (chunk === undefined) continue;
      else if (chunk === null || typeof chunk !== "object") {
        parts.push("?");
        args.push(chunk);
      } else throw UNUSUAL;
    }
  };
  try {
    walk(query.queryChunks);
    return { sql: parts.join(""), args };
  } catch (err) {
    if (err !== UNUSUAL) throw err;
    const { sql: text, params } = (db as any).dialect.sqlToQuery(query);
    return { sql: text, args: params };
  }
};

export interface DbSettings {
  url: string;
  authToken: string | null;
  sync?: "full" | "normal";
}

const BUSY_TIMEOUT_MS = 5_000;

export async function openDatabase(settings: DbSettings): Promise<Db> {
  const isFile = settings.url.startsWith("file:");
  if (isFile) {
    cacheStatements();
    const path = settings.url.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "");
    if (path && path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  }
  const client = createClient({ url: settings.url, authToken: settings.authToken ?? undefined, timeout: BUSY_TIMEOUT_MS });
  if (isFile) {
    // WAL lets the CLI and several instances share one file; busy_timeout (set per connection by the
    // driver's `timeout`) waits out writers instead of failing; synchronous FULL (the default): an acknowledged
    // write survives power loss; NORMAL (DATABASE_SYNC=normal) survives a crash of the process but not of the machine.
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA foreign_keys = ON");
    await client.execute(settings.sync === "normal" ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL");
  }
  await applyMigrations(client);
  const db = drizzle(client, { schema }) as Db;
  db.$writer = createGroupWriter(client);
  return db;
}

/** Applies each embedded migration once; several instances starting together serialize on the write lock. */
async function applyMigrations(client: Client): Promise<void> {
  await client.execute("CREATE TABLE IF NOT EXISTS schema_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const applied = new Set((await client.execute("SELECT tag FROM schema_migrations")).rows.map((r) => String(r.tag)));
  for (const m of migrations) {
    if (applied.has(m.tag)) continue;
    const statements = m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean);
    try {
      await client.batch([{ sql: "INSERT INTO schema_migrations (tag, applied_at) VALUES (?, ?)", args: [m.tag, Date.now()] }, ...statements], "write");
    } catch (err) {
      const raced = (await client.execute({ sql: "SELECT 1 FROM schema_migrations WHERE tag = ?", args: [m.tag] })).rows.length > 0;
      if (!raced) throw err;
    }
  }
}
