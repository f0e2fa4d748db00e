// Applies the embedded PostgreSQL migrations (drizzle-pg/) once each, in one transaction per start-up behind a
// transaction-scoped advisory lock, so instances starting together serialize and DDL is all-or-nothing (issue 18).
import type { SQL as Sql } from "bun";
import { pgMigrations } from "../migrations.gen";

/** An arbitrary constant naming "the migration lock" for pg_advisory_xact_lock. */
const MIGRATION_LOCK = 7_406_130_218;

/** Applies what is missing; returns the tags it applied. */
export async function applyPgMigrations(client: Sql, migrations = pgMigrations): Promise<string[]> {
  return client.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)`;
    const applied = new Set((await tx<{ tag: string }[]>`SELECT tag FROM schema_migrations`).map((r) => r.tag));
    const done: string[] = [];
    for (const m of migrations) {
      if (applied.has(m.tag)) continue;
      for (const statement of m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean)) await tx.unsafe(statement);
      await tx`INSERT INTO schema_migrations (tag, applied_at) VALUES (${m.tag}, ${Date.now()})`;
      done.push(m.tag);
    }
    return done;
  });
}
