// Group commit (src/db/group-commit.ts): batches of one event-loop turn share a transaction, yet each
// stays atomic on its own: a failing batch fails alone and leaves nothing behind.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Db } from "../src/db/client";
import { scratchDatabase } from "./support/db";
import { engine } from "./support/server";

let db: Db;
let close: () => void;
beforeAll(async () => {
  if (engine === "pg") return; // the tests below are SQLite's
  ({ db, close } = await scratchDatabase());
  await db.$client.execute("CREATE TABLE items (name TEXT PRIMARY KEY, n INTEGER NOT NULL)");
});
afterAll(() => close?.());

const insert = (name: string, n: number) => ({ sql: "INSERT INTO items (name, n) VALUES (?, ?)", args: [name, n] });
const names = async () => (await db.$client.execute("SELECT name FROM items ORDER BY name")).rows.map((r) => r.name);

// SQLite's runner; PostgreSQL's shares the queue and is tested in store.e2e.test.ts
test.skipIf(engine === "pg")("batches written together all commit and each gets its own results", async () => {
  const results = await Promise.all([
    db.$writer.write([insert("a", 1), { sql: "SELECT count(*) AS c FROM items", args: [] }]),
    db.$writer.write([insert("b", 2), { sql: "SELECT n FROM items WHERE name = 'b'", args: [] }]),
  ]);
  expect(Number(results[0][1].rows[0].c)).toBe(1);
  expect(Number(results[1][1].rows[0].n)).toBe(2);
  expect(await names()).toEqual(["a", "b"]);
});

// SQLite's runner; PostgreSQL's shares the queue and is tested in store.e2e.test.ts
test.skipIf(engine === "pg")("a failing batch is rejected alone; its first statements are undone and the others commit", async () => {
  const outcomes = await Promise.allSettled([
    db.$writer.write([insert("c", 3)]),
    db.$writer.write([insert("d", 4), insert("a", 9)]), // "a" exists: the whole batch must vanish
    db.$writer.write([insert("e", 5)]),
  ]);
  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain("UNIQUE");
  expect(await names()).toEqual(["a", "b", "c", "e"]);
});
