// Compaction (issue 17): a database that grew (30 days of delivered webhooks and emails) and was pruned by the
// prune-outbox job gets smaller once the nightly compact-database job runs. Standalone: `bun bench/compaction.ts [ROWS]`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { databaseFileSizes } from "../src/db/sqlite/maintenance";
import { openSqliteDb } from "../src/db/sqlite/open";
import { pruneSent } from "../src/outbox/store";

const DAY = 86_400_000;

export interface CompactionResult {
  rows: number;
  grownBytes: number;
  prunedBytes: number;
  compactedBytes: number;
  compactMs: number;
}

export async function compaction(rows = 20_000): Promise<CompactionResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-compaction-"));
  const databaseUrl = `file:${join(dir, "compaction.db")}`;
  const db = await openSqliteDb({ url: databaseUrl });
  try {
    // total bytes on disk: the file and its WAL
    const size = () => {
      const s = databaseFileSizes({ databaseUrl })!;
      return s.fileBytes + s.walBytes;
    };
    await db.exec(sql`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('a', 'a', 'business', 0, 0)`);
    await db.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
      VALUES ('w', 'a', 'k', 's', 'n', '', '', '', '', '', 0, 0)`);
    const old = Date.now() - 40 * DAY;
    const payload = JSON.stringify({ type: "subscriber.created", data: { subscriber: { email: "someone@example.com", metadata: { note: "x".repeat(900) } } } });
    for (let i = 0; i < rows; i += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, rows - i) }, (_, j) => ({
        sql: `INSERT INTO outbox (id, kind, topic, waitlist_id, payload, status, attempts, next_attempt_at, created_at, sent_at) VALUES (?, 'webhook', 'subscriber.created', 'w', ?, 'sent', 1, ?, ?, ?)`,
        args: [`ob_${i + j}`, payload, old, old, old],
      }));
      await db.$client.batch(batch, "write");
    }
    await db.$client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const grownBytes = size();
    await pruneSent(db);
    await db.$client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const prunedBytes = size();
    const t0 = performance.now();
    await db.compact();
    const compactMs = performance.now() - t0;
    return { rows, grownBytes, prunedBytes, compactedBytes: size(), compactMs };
  } finally {
    db.$client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await compaction(Number(process.argv[2] ?? 20_000));
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  console.log(`${r.rows} delivered outbox rows: grown ${mb(r.grownBytes)}, after prune-outbox ${mb(r.prunedBytes)}, after compact-database ${mb(r.compactedBytes)} (${r.compactMs.toFixed(0)} ms)`);
  if (!(r.compactedBytes < r.prunedBytes / 2)) {
    console.error("compaction did not shrink the file");
    process.exit(1);
  }
}
