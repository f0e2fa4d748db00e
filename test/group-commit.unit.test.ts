// Group commit (src/db/group-commit.ts): batches of one event-loop turn share a transaction, yet each
// stays atomic on its own: a failing batch fails alone and leaves nothing behind.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SqliteDb } from "../src/db/sqlite/open";
import { isDatabaseUnavailable } from "../src/db/errors";
import { createGroupCommit, MAX_GROUP } from "../src/db/group-commit";
import { createGroupWriter } from "../src/db/sqlite/group-writer";
import { scratchDatabase } from "./support/db";
import { engine } from "./support/server";

let db: SqliteDb;
let close: () => void;
beforeAll(async () => {
  if (engine === "pg") return; // the tests below are SQLite's
  ({ db, close } = (await scratchDatabase()) as { db: SqliteDb; close: () => Promise<void> });
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

// The queue itself (both engines' group commit), with a runner that records its groups
describe("the queue", () => {
  const recorder = (fail: (batches: number[]) => unknown = () => null) => {
    const groups: number[][] = [];
    const run = async (batches: number[]) => {
      groups.push(batches);
      await Bun.sleep(5);
      const error = fail(batches);
      if (error) throw error;
      return batches.map((b) => b * 10);
    };
    return { groups, run };
  };

  test("a turn's writes share one group; those that come while it runs share the next; each gets its own result", async () => {
    const { groups, run } = recorder();
    const write = createGroupCommit(run, { concurrency: 1 });
    const first = [write(1), write(2), write(3)];
    await Bun.sleep(1); // the first group is running
    const second = [write(4), write(5)];
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30, 40, 50]);
    expect(groups).toEqual([[1, 2, 3], [4, 5]]);
  });

  test(`a group holds at most ${MAX_GROUP} writes`, async () => {
    const { groups, run } = recorder();
    const write = createGroupCommit(run, { concurrency: 1 });
    await Promise.all(Array.from({ length: MAX_GROUP + 3 }, (_, i) => write(i)));
    expect(groups.map((g) => g.length)).toEqual([MAX_GROUP, 3]);
  });

  test("a failed group reruns its writes one by one, so only the failing one fails", async () => {
    const { groups, run } = recorder((batches) => (batches.includes(2) ? new Error("bad 2") : null));
    const write = createGroupCommit(run, { concurrency: 1 });
    const outcomes = await Promise.allSettled([write(1), write(2), write(3)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(groups).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  test("an error every write would meet (a lost connection) rejects the whole group without rerunning it", async () => {
    const lost = Object.assign(new Error("Connection closed"), { code: "ERR_POSTGRES_CONNECTION_CLOSED" });
    const { groups, run } = recorder(() => lost);
    const write = createGroupCommit(run, { concurrency: 1, failsEveryBatch: isDatabaseUnavailable });
    const outcomes = await Promise.allSettled([write(1), write(2), write(3)]);
    expect(outcomes.map((o) => (o.status === "rejected" ? o.reason : null))).toEqual([lost, lost, lost]);
    expect(groups).toEqual([[1, 2, 3]]);
  });
});

describe("the group writer tells when each write has ended", () => {
  test.skipIf(engine === "pg")("after a group, an exclusive transaction and a failed group, each time before its caller goes on", async () => {
    const events: string[] = [];
    const writer = createGroupWriter(db.$client, { written: () => events.push("written") });
    await writer.write([insert("told-1", 1)]).then(() => events.push("caller"));
    await writer.exclusive(async () => void events.push("transaction")).then(() => events.push("caller"));
    await writer.write([insert("told-1", 2)]).catch(() => events.push("caller saw the failure"));
    expect(events).toEqual(["written", "caller", "transaction", "written", "caller", "written", "caller saw the failure"]);
  });
});
