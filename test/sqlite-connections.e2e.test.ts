// SQLite keeps `synchronous` and `foreign_keys` per connection, and the driver's pool opens connections as it needs
// them: every connection to the file gets the configured ones (DATABASE_SYNC), not only the first; so does the group
// commit's own connection (src/db/file-writer.ts), which commits every acknowledged write.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import type { SqliteDb } from "../src/db/sqlite/open";
import { paced } from "../src/http/foreground";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function open(sync: "full" | "normal") {
  const dir = mkdtempSync(join(tmpdir(), "waitlist-conn-"));
  dirs.push(dir);
  return openDatabase({ url: `file:${join(dir, "t.db")}`, sync });
}

const pragma = async (db: Awaited<ReturnType<typeof open>>, name: string) => Number((await (db as SqliteDb).$client.execute(`PRAGMA ${name}`)).rows[0][0]);

for (const [sync, level] of [["normal", 1], ["full", 2]] as const) {
  test(`DATABASE_SYNC=${sync}: a connection the pool opens while a transaction holds another runs synchronous=${level} with foreign keys on`, async () => {
    const db = await open(sync);
    try {
      expect(await pragma(db, "synchronous")).toBe(level);
      // the interactive transaction holds one connection; the reads inside it borrow another, opened now
      const inside = await db.tx(async () => [await pragma(db, "synchronous"), await pragma(db, "foreign_keys")]);
      expect(inside).toEqual([level, 1]);
    } finally {
      await db.close();
    }
  });
}

for (const [sync, level] of [["normal", 1], ["full", 2]] as const) {
  test(`DATABASE_SYNC=${sync}: the group commit's own connection runs synchronous=${level} with foreign keys on`, async () => {
    const db = await open(sync);
    try {
      // read inside a group's transaction, on the connection that commits the writes
      const [[syncRow], [fkRow]] = await (db as SqliteDb).$writer.write([{ sql: "PRAGMA synchronous", args: [] }, { sql: "PRAGMA foreign_keys", args: [] }]).then((r) => r.map((x) => x.rows));
      expect([Number(syncRow[0]), Number(fkRow[0])]).toEqual([level, 1]);
    } finally {
      await db.close();
    }
  });
}

test("two databases of one process keep their own settings", async () => {
  const normal = await open("normal");
  const full = await open("full");
  try {
    const [a, b] = await Promise.all([normal.tx(() => pragma(normal, "synchronous")), full.tx(() => pragma(full, "synchronous"))]);
    expect([a, b]).toEqual([1, 2]);
  } finally {
    await normal.close();
    await full.close();
  }
});

test("a transaction that need not wait for the disk leaves the group commit's connection as DATABASE_SYNC says (issue 47)", async () => {
  const db = await open("full");
  try {
    const inside = await db.tx(async (tx) => Number((await tx.rows<Record<string, unknown>>(sql`PRAGMA synchronous`))[0]!.synchronous), { durable: false });
    expect(inside).toBe(1);
    // the next write, a request's, commits with the fsync again; a plain transaction too
    const [[after]] = await (db as SqliteDb).$writer.write([{ sql: "PRAGMA synchronous", args: [] }]).then((r) => r.map((x) => x.rows));
    expect(Number(after![0])).toBe(2);
    expect(await db.tx(async (tx) => Number((await tx.rows<Record<string, unknown>>(sql`PRAGMA synchronous`))[0]!.synchronous))).toBe(2);
  } finally {
    await db.close();
  }
});

test("the WAL is folded into the file as writes go on, with SQLite's automatic checkpoint off (issue 47)", async () => {
  const db = await open("full");
  const path = (db as SqliteDb).$path!;
  try {
    expect(await pragma(db, "wal_autocheckpoint")).toBe(0);
    await db.exec(sql`CREATE TABLE pad (v TEXT)`);
    // 8 MB written in 400 KB commits: without checkpoints the WAL would hold all of it; with them it starts over
    const chunk = "x".repeat(4_000);
    let largest = 0;
    for (let i = 0; i < 20; i++) {
      await db.write(Array.from({ length: 100 }, () => sql`INSERT INTO pad (v) VALUES (${chunk})`));
      largest = Math.max(largest, statSync(`${path}-wal`).size);
      await Bun.sleep(250);
    }
    expect(largest).toBeLessThan(4_000_000);
    const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM pad`);
    expect(n).toBe(2_000);
  } finally {
    await db.close();
  }
});

test("writes that never pause (an import's batches) still let the WAL start over, while other writes go on (issue 47)", async () => {
  const db = await open("full");
  const path = (db as SqliteDb).$path!;
  try {
    await db.exec(sql`CREATE TABLE pad (v TEXT)`);
    const chunk = "x".repeat(4_000);
    // 48 MB in 40 KB batches, back to back as background work (foreground.ts `paced`), each committed without an
    // fsync as an import's are; a sign-up-like write every 10 ms beside them. Checkpoints that never caught up left
    // the WAL holding all of it (checkpointer.ts WAL_LIMIT being 64 MB); caught up, it starts over about every 200 ms
    let largest = 0;
    let batches = 0;
    let others = 0;
    let importing = true;
    const alongside = (async () => {
      while (importing) {
        await db.write([sql`INSERT INTO pad (v) VALUES ('sign-up')`]);
        others++;
        await Bun.sleep(10);
      }
    })();
    await paced(
      async () => {
        await db.tx((tx) => tx.exec(sql`INSERT INTO pad (v) VALUES ${sql.join(Array.from({ length: 10 }, () => sql`(${chunk})`), sql`, `)}`), { durable: false });
        largest = Math.max(largest, statSync(`${path}-wal`).size);
        // at most ~40 MB a second whatever the disk: what the WAL holds between checkpoints stays the same on any machine
        await Bun.sleep(1);
        return ++batches < 1_200;
      },
      { first: 1, max: 1 },
    );
    importing = false;
    await alongside;
    expect(largest).toBeLessThan(40_000_000);
    expect(others).toBeGreaterThan(0);
    const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM pad WHERE v <> 'sign-up'`);
    expect(n).toBe(12_000);
  } finally {
    await db.close();
  }
});
