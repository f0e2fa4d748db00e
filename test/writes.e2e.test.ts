// What a write changes on the embedded engine (src/db/sqlite/writes.ts), which keeps the read caches valid across this
// process's own commits: derived from the schema's tables, foreign keys and the migrations' triggers. The model must
// cover the migrated database (every table, cascade and trigger), name every table a statement really changes, and
// a cached read must never outlive a cascaded delete.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { getTableName, sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { readCache } from "../src/db/read-cache";
import { ENGINE_TABLES, foreignKeys, schemaTables, triggersOf, writeModel, writtenBy } from "../src/db/sqlite/writes";
import { removeDir, tempDir } from "./support/cleanup";
import { startServer, type TestServer } from "./support/server";

const dir = tempDir("waitlist-writes-");
const file = join(dir, "w.db");
let s: TestServer;
let raw: Database;
let waitlistId = "";

beforeAll(async () => {
  // a database with a row in every table a waitlist's life writes, made through the API
  s = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: `file:${file}` });
  const { key } = await s.account("business");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Writes", referral_rewards: { enabled: true } } })).body.data.waitlist;
  waitlistId = w.id;
  const path = `/api/v1/waitlist/${w.key}`;
  await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: false, milestones: [{ referrals: 1, reward: "Stickers", tag: "Fan" }] } });
  const first = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "a@example.com" } })).body;
  for (const email of ["b@example.com", "c@example.com"]) await s.request("POST", `${path}/sign-up`, { key, body: { email, metadata: { referred_by: first.referral_code } } });
  await s.request("POST", `${path}/tags`, { key, body: { name: "VIP" } });
  await s.request("POST", `${path}/subscribers/b%40example.com/tags`, { key, body: { tags: ["VIP"] } });
  await s.request("POST", `${path}/landing-page`, { key, body: { headline: "Soon" } });
  await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "v1" } });
  await s.stop({ keep: true });
  raw = new Database(file);
  raw.run("PRAGMA foreign_keys = ON");
});

afterAll(async () => {
  raw?.close();
  await s?.stop().catch(() => {});
  removeDir(dir);
});

const rowsOf = async (q: string) => raw.query(q).all() as Record<string, unknown>[];

describe("the model covers the migrated database", () => {
  test("every table is the schema's or the engine's own", async () => {
    const found = (await rowsOf("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")).map((r) => String(r.name)).sort();
    expect(found).toEqual([...schemaTables().map(getTableName), ...ENGINE_TABLES].sort());
  });

  test("every foreign key and its actions are the schema's", async () => {
    const found: string[] = [];
    for (const table of schemaTables().map(getTableName)) {
      for (const fk of await rowsOf(`PRAGMA foreign_key_list(${table})`)) found.push(`${fk.table} -> ${table} delete ${String(fk.on_delete).toLowerCase()} update ${String(fk.on_update).toLowerCase()}`);
    }
    expect(found.sort()).toEqual(foreignKeys().map((k) => `${k.parent} -> ${k.child} delete ${k.onDelete} update ${k.onUpdate}`).sort());
    // the cascades this model follows are there at all
    expect(found.filter((f) => f.includes("delete cascade")).length).toBeGreaterThan(10);
  });

  test("every trigger is one the migrations declare, with the same text, and writes tables the model knows", async () => {
    const declared = triggersOf();
    const found = await rowsOf("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name");
    expect(found.map((r) => String(r.name))).toEqual([...declared.keys()].sort());
    const normal = (text: string) => text.replace(/\s+/g, " ").replace(/;\s*$/, "").trim();
    const known = new Set<string>([...schemaTables().map(getTableName), ...ENGINE_TABLES]);
    for (const row of found) {
      const trigger = declared.get(String(row.name))!;
      expect(trigger.table).toBe(String(row.tbl_name));
      expect(normal(trigger.sql)).toBe(normal(String(row.sql)));
      const written = writtenBy([trigger.body]);
      expect(written).not.toBe("all");
      expect([...(written as Set<string>)].map((t) => t.replace(/#counts$/, "")).filter((t) => !known.has(t))).toEqual([]);
    }
  });

  test("a trigger the model cannot read fails the model, not the cache", () => {
    expect(() => triggersOf(["CREATE TRIGGER t AFTER INSERT ON x FOR EACH STATEMENT"])).toThrow(/cannot read/);
  });
});

describe("writtenBy", () => {
  test("a subscriber's delete cascades to its referrals, tags, rewards, share clicks and data links, and its trigger to the counters, not the waitlist", () => {
    expect(writtenBy(["DELETE FROM subscribers WHERE id = ?"])).toEqual(
      new Set(["subscribers", "referrals", "subscriber_tags", "milestone_rewards", "share_clicks", "data_requests", "rank_counts", "waitlists#counts"]),
    );
    expect(writtenBy(["DELETE FROM tags WHERE id = ?"])).toEqual(new Set(["tags", "subscriber_tags"]));
  });

  test("a waitlist's delete reaches every table hanging off it, and an account's its keys too", () => {
    const waitlist = writtenBy(["DELETE FROM waitlists WHERE id = ?"]) as Set<string>;
    for (const t of ["waitlists", "subscribers", "referrals", "tags", "subscriber_tags", "landing_pages", "outbox", "daily_stats", "source_views", "share_clicks", "rank_counts", "api_keys"]) expect(waitlist).toContain(t);
    expect(writtenBy(["DELETE FROM accounts WHERE id = ?"])).toContain("accounts");
    expect(writtenBy(["DELETE FROM accounts WHERE id = ?"])).toContain("subscribers");
  });

  test("an update of a waitlist's counters alone is its counts; an upsert's DO UPDATE names no table; an unreadable write is everything", () => {
    expect(writtenBy(["UPDATE waitlists SET views_count = views_count + 1 WHERE id = ? AND changes() = 1"])).toEqual(new Set(["waitlists#counts"]));
    expect(writtenBy(["UPDATE waitlists SET subscribers_count = subscribers_count + 1, last_seq = max(last_seq, ?) WHERE id = ?"])).toEqual(new Set(["waitlists#counts"]));
    expect(writtenBy(["UPDATE waitlists SET views_count = 0, name = ? WHERE id = ?"])).toEqual(new Set(["waitlists"]));
    expect(writtenBy(["INSERT INTO rate_limits (key, count) VALUES (?, 1) ON CONFLICT (key) DO UPDATE SET count = count + 1"])).toEqual(new Set(["rate_limits"]));
    expect(writtenBy(["WITH picked AS (SELECT id FROM outbox) UPDATE outbox SET locked_until = ? WHERE id IN (SELECT id FROM picked)"])).toEqual(new Set(["outbox"]));
    expect(writtenBy(["SELECT * FROM api_keys WHERE hash = ?"])).toEqual(new Set());
    expect(writtenBy(["INSERT /* odd */ INTO"])).toBe("all");
  });

  test("the counter columns come from the trigger that keeps the version", () => {
    expect(writeModel().counters).toEqual(new Map([["waitlists", new Set(["subscribers_count", "views_count", "last_seq"])]]));
  });
});

/** Each table's rows as sorted JSON (a waitlist's counters apart, as `waitlists#counts`). */
async function snapshot(): Promise<Map<string, string>> {
  const counters = [...writeModel().counters.get("waitlists")!];
  const out = new Map<string, string>();
  for (const table of [...schemaTables().map(getTableName), ...ENGINE_TABLES]) {
    const rows = (await rowsOf(`SELECT * FROM ${table}`)).map((r) => {
      const row = { ...r } as Record<string, unknown>;
      if (table === "waitlists") for (const c of counters) delete row[c];
      return JSON.stringify(row, (_, v) => (typeof v === "bigint" ? String(v) : v));
    });
    out.set(table, rows.sort().join("\n"));
  }
  out.set("waitlists#counts", JSON.stringify((await rowsOf(`SELECT ${counters.join(", ")} FROM waitlists ORDER BY id`)).map((r) => ({ ...r }))));
  return out;
}

/** The tables a statement really changes (run in a transaction that is rolled back). */
async function changedBy(statement: string, args: unknown[] = []): Promise<string[]> {
  raw.run("BEGIN");
  try {
    const before = await snapshot();
    raw.query(statement).run(...(args as any[]));
    const after = await snapshot();
    return [...before.keys()].filter((t) => before.get(t) !== after.get(t));
  } finally {
    raw.run("ROLLBACK");
  }
}

describe("the model against what statements really change", () => {
  const cases: [string, () => Promise<unknown[]>][] = [
    ["DELETE FROM subscribers WHERE email = ?", async () => ["a@example.com"]],
    ["DELETE FROM subscribers WHERE email = ?", async () => ["b@example.com"]],
    ["DELETE FROM tags WHERE name = ?", async () => ["VIP"]],
    ["UPDATE subscribers SET points = points + 5 WHERE email = ?", async () => ["c@example.com"]],
    ["UPDATE waitlists SET views_count = views_count + 1 WHERE id = ?", async () => [waitlistId]],
    ["UPDATE waitlists SET name = ? WHERE id = ?", async () => ["Renamed", waitlistId]],
    ["DELETE FROM waitlists WHERE id = ?", async () => [waitlistId]],
    ["DELETE FROM accounts", async () => []],
  ];
  for (const [statement, args] of cases) {
    test(`${statement}: every table it changes is in the model`, async () => {
      const changed = await changedBy(statement, await args());
      expect(changed.length).toBeGreaterThan(0);
      const model = writtenBy([statement]) as Set<string>;
      expect(changed.filter((t) => !model.has(t))).toEqual([]);
    });
  }

  test("the fixture has what the cascades reach: referrals, tags, rewards", async () => {
    for (const table of ["referrals", "subscriber_tags", "milestone_rewards", "landing_pages", "daily_stats"]) {
      expect(Number((await rowsOf(`SELECT count(*) AS n FROM ${table}`))[0].n), table).toBeGreaterThan(0);
    }
  });
});

describe("a cached read and a cascaded delete", () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDatabase({ url: `file:${file}`, poolSize: 2 });
  });
  afterAll(async () => {
    await db?.close();
  });

  test("a cache over subscriber tags reloads after its tag's delete, while one over landing pages holds across it", async () => {
    expect(db.ownCommits).not.toBeNull();
    const count = async (table: string) => Number((await db.rows<{ n: number }>(sql.raw(`SELECT count(*) AS n FROM ${table}`)))[0].n);
    const tagged = readCache<string, number>(db, { max: 10, tables: ["subscriber_tags"] });
    const pages = readCache<string, number>(db, { max: 10, tables: ["landing_pages"] });
    let loads = 0;
    const pagesLoad = () => (loads++, count("landing_pages"));
    // VIP and the milestone's Fan
    expect(await tagged.get("n", () => count("subscriber_tags"))).toBe(2);
    expect(await pages.get("n", pagesLoad)).toBe(1);
    // this process's own commit: the stamp moves, and only what it wrote may fail the entries
    await db.exec(sql`DELETE FROM tags WHERE name = 'VIP'`);
    await new Promise((resolve) => setImmediate(resolve)); // the change stamp is read once per turn
    expect(await tagged.get("n", () => count("subscriber_tags"))).toBe(1);
    expect(await pages.get("n", pagesLoad)).toBe(1);
    expect(loads).toBe(1);
  });
});
