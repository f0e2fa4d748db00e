// The Store and its Dialect behave the same on embedded libSQL and on a real PostgreSQL (issue 18): numbers,
// changed-row counts, atomic write groups, the previous statement's count, unique keys named alike, and
// concurrent sign-ups taking distinct confirmation numbers.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DrizzleQueryError, sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import type { Db } from "../src/db/db";
import type { Store } from "../src/db/store";
import { scratchPgUrl } from "./support/pg";
import { lockLine } from "../src/subscribers/lock";

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const engines: Record<string, () => Promise<Db>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), "waitlist-store-"));
    const db = await openDatabase({ url: `file:${join(dir, "t.db")}` });
    cleanups.push(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return db;
  },
  pg: async () => {
    const db = await openDatabase({ url: await scratchPgUrl(), poolSize: 10, statementTimeoutMs: 5_000 });
    cleanups.push(() => db.close());
    return db;
  },
};

async function seed(s: Store) {
  await s.exec(sql`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('a', 'a', 'business', 0, ${Date.now()})`);
  await s.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, name_key, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
    VALUES ('w', 'a', 'k', 's', 'Rocket', 'rocket', '', '', '', '', '', 0, 0)`);
}

const subscriber = (id: string, email: string, seq: SQL | number | null) => sql`INSERT INTO subscribers
  (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, confirmed_at, updated_at)
  VALUES (${id}, 'w', ${email}, 'confirmed', 'unknown', 0, ${seq}, ${"r" + id}, ${"t" + id}, 'api', ${Date.UTC(2026, 0, 1)}, ${Date.UTC(2026, 0, 1)}, 0)
  RETURNING seq`;
type SQL = ReturnType<typeof sql>;

for (const [engine, open] of Object.entries(engines)) {
  describe(`on ${engine}`, () => {
    test("reads give numbers for counts, sums and ms times; writes report the rows they changed, with or without RETURNING", async () => {
      const s = await open();
      await seed(s);
      await s.write([subscriber("x1", "a@example.com", 1), subscriber("x2", "b@example.com", 2)]);
      const [row] = await s.rows<{ n: number; total: number; joined: number }>(
        sql`SELECT count(*) AS n, sum(seq) AS total, max(joined_at) AS joined FROM subscribers WHERE waitlist_id = 'w'`,
      );
      expect(row).toEqual({ n: 2, total: 3, joined: Date.UTC(2026, 0, 1) });
      expect(await s.exec(sql`UPDATE subscribers SET points = points + 1 WHERE waitlist_id = 'w'`)).toEqual({ changed: 2 });
      expect(await s.exec(sql`UPDATE subscribers SET points = 5 WHERE id = 'x1' RETURNING id`)).toEqual({ changed: 1 });
      expect(await s.exec(sql`DELETE FROM subscribers WHERE id = 'nobody'`)).toEqual({ changed: 0 });
    });

    test("a write group is all or nothing, and names the unique key it broke as SQLite does", async () => {
      const s = await open();
      await seed(s);
      const failed = await s.write([subscriber("y1", "c@example.com", 1), subscriber("y2", "c@example.com", 2)]).catch((e) => e);
      expect(s.d.uniqueKey(failed)).toBe("subscribers.waitlist_id, subscribers.email");
      expect(await s.rows(sql`SELECT id FROM subscribers`)).toEqual([]);
      const slug = await s.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
        VALUES ('w2', 'a', 'k2', 's', 'Other', '', '', '', '', '', 0, 0)`).catch((e) => e);
      expect(s.d.uniqueKey(slug)).toBe("waitlists.slug");
      const name = await s.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, name_key, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
        VALUES ('w3', 'a', 'k3', 's3', 'ROCKET', 'rocket', '', '', '', '', '', 0, 0)`).catch((e) => e);
      expect(s.d.uniqueKey(name)).toBe("waitlists.name_key");
      // the builder wraps the driver's error (DrizzleQueryError, the driver's as its cause)
      expect(s.d.uniqueKey(new DrizzleQueryError("INSERT INTO waitlists ...", [], slug))).toBe("waitlists.slug");
      expect(s.d.uniqueKey(new Error("something else"))).toBeNull();
    });

    test("a statement sees the row count of the one before it in its group; a JSON list reads as rows", async () => {
      const s = await open();
      await seed(s);
      const [, , marked] = await s.write([
        subscriber("z1", "d@example.com", 1),
        sql`UPDATE subscribers SET points = 7 WHERE waitlist_id = 'w' AND points = 0`,
        sql`INSERT INTO meta (key, value) SELECT 'changed', CAST(${s.d.prevChanged} AS TEXT) WHERE ${s.d.prevChanged} > 0 RETURNING value`,
      ]);
      expect(marked).toEqual([{ value: "1" }]);
      const values = await s.rows<{ value: string }>(sql`SELECT j.value FROM ${s.d.jsonTextArray(["a", "b", "c"])} ORDER BY j.value`);
      expect(values.map((v) => v.value)).toEqual(["a", "b", "c"]);
      const [agg] = await s.rows<{ list: string; none: string; top: number }>(sql`SELECT
        (SELECT ${s.d.jsonObjects({ v: sql`j.value`, n: sql`length(j.value)` }, sql`j.value DESC`)} FROM ${s.d.jsonTextArray(["x", "yy"])}) AS list,
        (SELECT ${s.d.jsonObjects({ v: sql`j.value` }, sql`j.value`)} FROM ${s.d.jsonTextArray([])}) AS none,
        ${s.d.greatest(sql`${3}`, sql`${7}`)} AS top`);
      expect(JSON.parse(agg.list)).toEqual([{ v: "yy", n: 2 }, { v: "x", n: 1 }]);
      expect(JSON.parse(agg.none)).toEqual([]);
      expect(Number(agg.top)).toBe(7);
    });

    test("sign-ups written at the same moment take distinct confirmation numbers (the waitlist row is locked first)", async () => {
      const s = await open();
      await seed(s);
      const seqs = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          s.write([
            sql`SELECT 1 FROM waitlists WHERE id = 'w'${s.d.forUpdate}`,
            subscriber(`c${i}`, `c${i}@example.com`, sql`(SELECT last_seq + 1 FROM waitlists WHERE id = 'w')`),
          ]),
        ),
      );
      expect(seqs.map(([, [row]]) => Number(row.seq)).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const [w] = await s.rows<{ subscribers_count: number; last_seq: number }>(sql`SELECT subscribers_count, last_seq FROM waitlists WHERE id = 'w'`);
      expect(w).toEqual({ subscribers_count: 12, last_seq: 12 });
    });

    test("writes of one turn to one waitlist commit together; a failing one among them fails alone, undone whole, and the others commit", async () => {
      const s = await open();
      await seed(s);
      // PostgreSQL names its transaction; SQLite's shared transaction is shown by test/group-commit.unit.test.ts.
      // Each write starts by locking its waitlist's line, as every write of a ranked subscriber does
      const txid = engine === "pg" ? sql`SELECT pg_current_xact_id()::text AS tx` : sql`SELECT 'one' AS tx`;
      const line = () => lockLine(s, "w");
      const together = await Promise.all(Array.from({ length: 5 }, (_, i) => s.write([line(), subscriber(`g${i}`, `g${i}@example.com`, i + 1), txid])));
      expect(together.map(([, [row]]) => Number(row.seq))).toEqual([1, 2, 3, 4, 5]);
      expect(new Set(together.map(([, , [row]]) => row.tx)).size).toBe(1);

      const outcomes = await Promise.allSettled([
        s.write([line(), subscriber("f1", "f1@example.com", 11), txid]),
        s.write([line(), subscriber("f2", "f2@example.com", 12), subscriber("f3", "g0@example.com", 13)]), // g0's email: taken
        s.write([line(), subscriber("f4", "f4@example.com", 14), txid]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(s.d.uniqueKey((outcomes[1] as PromiseRejectedResult).reason)).toBe("subscribers.waitlist_id, subscribers.email");
      const ids = await s.rows<{ id: string }>(sql`SELECT id FROM subscribers WHERE id LIKE 'f%' ORDER BY id`);
      expect(ids.map((r) => r.id)).toEqual(["f1", "f4"]);
    });

    // PostgreSQL only (issue 43): writes lock per waitlist, so a turn's writes to different waitlists, and the writes
    // that lock no waitlist, are transactions of their own that wait for no other line; SQLite's one writer runs a
    // turn's writes in one transaction
    test.skipIf(engine !== "pg")("a turn's writes are one transaction per waitlist line, and one for each write that locks none", async () => {
      const s = await open();
      await seed(s);
      await s.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
        VALUES ('v', 'a', 'kv', 'sv', 'Other', '', '', '', '', '', 0, 0)`);
      const txid = sql`SELECT pg_current_xact_id()::text AS tx`;
      const [w1, w2, v, plain1, plain2] = await Promise.all([
        s.write([lockLine(s, "w"), txid]),
        s.write([lockLine(s, "w"), txid]),
        s.write([lockLine(s, "v"), txid]),
        s.write([txid]),
        s.write([txid]),
      ]);
      const tx = (r: Record<string, unknown>[][]) => String(r[r.length - 1][0].tx);
      expect(tx(w1)).toBe(tx(w2));
      expect(new Set([tx(w1), tx(v), tx(plain1), tx(plain2)]).size).toBe(4);
    });

    test.skipIf(engine !== "pg")("within a line's turn the writes that lock an address run by address, so two lines take addresses in one order", async () => {
      const s = await open();
      await seed(s);
      const mark = (name: string) => sql`INSERT INTO meta (key, value) VALUES (${name}, CAST((SELECT count(*) FROM meta WHERE key LIKE 'keyed:%') AS TEXT))`;
      await Promise.all([
        s.write([lockLine(s, "w"), s.d.lockKey("confirmation:b@example.com"), mark("keyed:b")]),
        s.write([lockLine(s, "w"), mark("keyed:none")]),
        s.write([lockLine(s, "w"), s.d.lockKey("confirmation:a@example.com"), mark("keyed:a")]),
      ]);
      const marks = await s.rows<{ key: string }>(sql`SELECT key FROM meta WHERE key LIKE 'keyed:%' ORDER BY value`);
      expect(marks.map((m) => m.key)).toEqual(["keyed:a", "keyed:b", "keyed:none"]);
    });

    test("writers deciding on something no row stands for yet, under lockKey, decide one after another", async () => {
      const s = await open();
      const email = `cap-${Math.random()}@example.com`;
      // each may record a send only while fewer than 3 are recorded: without the lock, PostgreSQL's writers all read 0
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          s.write([
            s.d.lockKey(`confirmation:${email}`),
            sql`INSERT INTO confirmation_sends (email, waitlist_id, sent_at)
              SELECT ${email}, ${`w${i}`}, 0 WHERE (SELECT count(*) FROM confirmation_sends WHERE email = ${email}) < 3`,
          ]),
        ),
      );
      expect(await s.rows(sql`SELECT count(*) AS n FROM confirmation_sends WHERE email = ${email}`)).toEqual([{ n: 3 }]);
    });
  });
}

describe("interactive transactions", () => {
  for (const [engine, open] of Object.entries(engines)) {
    test(`on ${engine}, transactions and write groups started at the same moment all commit, one after another`, async () => {
      const s = await open();
      await seed(s);
      const started = performance.now();
      await Promise.all([
        ...Array.from({ length: 6 }, (_, i) =>
          s.tx(async (tx) => {
            const [w] = await tx.rows<{ last_seq: number }>(sql`SELECT last_seq FROM waitlists WHERE id = 'w'${tx.d.forUpdate}`);
            await tx.exec(subscriber(`t${i}`, `t${i}@example.com`, Number(w.last_seq) + 1));
          }),
        ),
        ...Array.from({ length: 6 }, (_, i) => s.write([sql`SELECT 1 FROM waitlists WHERE id = 'w'${s.d.forUpdate}`, subscriber(`g${i}`, `g${i}@example.com`, sql`(SELECT last_seq + 1 FROM waitlists WHERE id = 'w')`)])),
      ]);
      // no writer waited out the 5 s busy timeout
      expect(performance.now() - started).toBeLessThan(4_000);
      const seqs = await s.rows<{ seq: number }>(sql`SELECT seq FROM subscribers ORDER BY seq`);
      expect(seqs.map((r) => Number(r.seq))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    });

    test(`on ${engine}, writes made outside a transaction that holds the lock across an await wait their turn, and the server goes on meanwhile`, async () => {
      const s = await open();
      await seed(s);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const started = performance.now();
      const held = s.tx(async (tx) => {
        await tx.exec(sql`UPDATE waitlists SET name = 'Held' WHERE id = 'w'`);
        entered();
        await gate;
      });
      await inside;
      // the Store's exec, a rows that writes, and drizzle's builder, each while the transaction holds the lock
      const outside = Promise.all([
        s.exec(sql`UPDATE accounts SET ai_credits = ai_credits + 1 WHERE id = 'a'`),
        s.rows<{ ai_credits: number }>(sql`UPDATE accounts SET ai_credits = ai_credits + 1 WHERE id = 'a' RETURNING ai_credits`),
        s.insert(s.t.apiKeys).values({ id: "k1", accountId: "a", name: "outside", hash: "h1", createdAt: 0 }),
      ]);
      // on SQLite a write on the main thread's connection used to wait for the lock synchronously: no timer ran
      const tick = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(performance.now() - tick).toBeLessThan(1_000);
      release();
      await held;
      await outside;
      // and none of them waited out the 5 s busy timeout
      expect(performance.now() - started).toBeLessThan(4_000);
      const [after] = await s.rows<{ credits: number; name: string; keys: number }>(
        sql`SELECT (SELECT ai_credits FROM accounts WHERE id = 'a') AS credits, (SELECT name FROM waitlists WHERE id = 'w') AS name, (SELECT count(*) FROM api_keys) AS keys`,
      );
      expect({ ...after, credits: Number(after.credits), keys: Number(after.keys) }).toEqual({ credits: 2, name: "Held", keys: 1 });
    });
  }
});
