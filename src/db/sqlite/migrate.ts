// The embedded database's migrations (drizzle/), embedded in the binary, applied once each at open.
import type { Client, InStatement } from "@libsql/client";
import { DatabaseOpenError } from "../errors";
import { migrations } from "../migrations.gen";

/** The binary's schema version: one per embedded migration; recorded in the database as PRAGMA user_version. */
export const SCHEMA_VERSION = migrations.length;

/** The schema version a database records: its user_version, or (a server) how many migrations it has applied. */
export async function schemaVersionOf(client: Client): Promise<number> {
  const recorded = await client.execute("PRAGMA user_version").then((r) => Number(r.rows[0]?.[0] ?? 0), () => 0);
  const applied = await client.execute("SELECT count(*) FROM schema_migrations").then((r) => Number(r.rows[0]?.[0] ?? 0), () => 0);
  return Math.max(recorded, applied);
}

/**
 * Applies each embedded migration once and records the schema version; refuses a database written by a newer
 * binary. Several instances starting together serialize on the write lock. A migration whose first line says
 * `-- no-transaction` (VACUUM can't run in one) runs statement by statement; its statements are idempotent.
 */
export async function applyMigrations(client: Client, isFile: boolean): Promise<void> {
  await client.execute("CREATE TABLE IF NOT EXISTS schema_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const found = await schemaVersionOf(client);
  if (found > SCHEMA_VERSION) throw new DatabaseOpenError("schema_too_new", `schema ${found} is newer than this binary's ${SCHEMA_VERSION}: upgrade the binary`);
  const applied = new Set((await client.execute("SELECT tag FROM schema_migrations")).rows.map((r) => String(r.tag)));
  for (const [i, m] of migrations.entries()) {
    if (applied.has(m.tag)) continue;
    const statements = m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean);
    const record: InStatement[] = [{ sql: "INSERT OR IGNORE INTO schema_migrations (tag, applied_at) VALUES (?, ?)", args: [m.tag, Date.now()] }];
    if (isFile) record.push(`PRAGMA user_version = ${i + 1}`);
    if (m.sql.startsWith("-- no-transaction")) {
      for (const statement of statements) await client.execute(statement);
      await client.batch(record, "write");
      continue;
    }
    try {
      await client.batch([...record, ...statements], "write");
    } catch (err) {
      const raced = (await client.execute({ sql: "SELECT 1 FROM schema_migrations WHERE tag = ?", args: [m.tag] })).rows.length > 0;
      if (!raced) throw err;
    }
  }
  // databases migrated before the version was recorded
  if (isFile && Number((await client.execute("PRAGMA user_version")).rows[0]?.[0] ?? 0) < SCHEMA_VERSION) await client.execute(`PRAGMA user_version = ${SCHEMA_VERSION}`);
}
