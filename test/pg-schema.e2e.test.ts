// The PostgreSQL schema on a real server (issue 18): its migrations apply once even when instances start together,
// and its triggers keep the same counters as SQLite's. One script of portable SQL runs on both engines; then the
// counters are recounted from the rows.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openDatabase } from "../src/db/open";
import type { SqliteDb } from "../src/db/sqlite/open";
import { applyPgMigrations } from "../src/db/pg/migrate";
import { pgMigrations } from "../src/db/migrations.gen";
import { recountRanks } from "./support/db";
import { scratchPgUrl } from "./support/pg";
import { runCli } from "./support/server";

type Exec = (text: string, args?: unknown[]) => Promise<Record<string, unknown>[]>;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function pgEngine(): Promise<Exec> {
  const client = new SQL(await scratchPgUrl(), { max: 2 });
  cleanups.push(() => client.close());
  await applyPgMigrations(client);
  return async (text, args = []) => {
    let n = 0;
    return [...(await client.unsafe(text.replace(/\?/g, () => `$${++n}`), args as any[]))];
  };
}

async function sqliteEngine(): Promise<Exec> {
  const dir = mkdtempSync(join(tmpdir(), "waitlist-parity-"));
  const db = await openDatabase({ url: `file:${join(dir, "t.db")}` });
  cleanups.push(() => {
    (db as SqliteDb).$client.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return async (text, args = []) => (await (db as SqliteDb).$client.execute({ sql: text, args: args as any[] })).rows as any;
}

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 30, 23, 0, 0);

/** The same writes on either engine: sign-ups, confirmations, point changes, invites and deletes. */
async function script(exec: Exec) {
  await exec(`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('a', 'a', 'business', 0, ?)`, [T0]);
  await exec(
    `INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body, signing_secret, created_at, updated_at)
     VALUES ('w', 'a', 'k', 's', 'n', '', '', '', '', '', ?, ?)`,
    [T0, T0],
  );
  const add = (i: number, points: number, seq: number | null, at: number) =>
    exec(
      `INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, confirmed_at, updated_at)
       VALUES (?, 'w', ?, ?, 'unknown', ?, ?, ?, ?, 'api', ?, ?, ?)`,
      [`s${String(i).padStart(4, "0")}`, `p${i}@example.com`, seq === null ? "pending" : "confirmed", points, seq, `r${i}`, `t${i}`, at, seq === null ? null : at, at],
    );
  let seq = 0;
  for (let i = 0; i < 300; i++) await add(i, (i % 4) * 10, i % 7 === 0 ? null : ++seq, T0 + i * 600_000);
  // confirm every pending one (the next day for some: the daily count moves with the confirmation time)
  for (let i = 0; i < 300; i += 7) {
    await exec(`UPDATE subscribers SET status = 'confirmed', seq = ?, confirmed_at = ? WHERE id = ?`, [++seq, T0 + DAY + i, `s${String(i).padStart(4, "0")}`]);
  }
  await exec(`UPDATE subscribers SET points = points + 30 WHERE id IN ('s0010', 's0011', 's0100', 's0299')`);
  await exec(`UPDATE subscribers SET access = 'invited', final_position = 1 WHERE id IN ('s0005', 's0006', 's0100')`);
  await exec(`UPDATE subscribers SET access = 'waiting' WHERE id = 's0006'`);
  await exec(`DELETE FROM subscribers WHERE id IN ('s0001', 's0002', 's0005', 's0200')`);
  await exec(`UPDATE waitlists SET name = 'renamed' WHERE id = 'w'`);
  await exec(`UPDATE waitlists SET views_count = views_count + 5 WHERE id = 'w'`);
}

async function counters(exec: Exec) {
  const num = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v])));
  return {
    rankCounts: num(await exec(`SELECT level, points, bucket, count FROM rank_counts WHERE count <> 0 ORDER BY level, points, bucket`)),
    recount: num(await exec(recountRanks())),
    waitlist: num(await exec(`SELECT subscribers_count, last_seq, views_count, version, name FROM waitlists`)),
    confirmed: num(await exec(`SELECT count(*) AS n, max(seq) AS last FROM subscribers WHERE seq IS NOT NULL`)),
    daily: num(await exec(`SELECT date, sign_ups FROM daily_stats ORDER BY date`)),
  };
}

describe("PostgreSQL schema", () => {
  test("migrations started by three instances at once apply exactly once", async () => {
    const url = await scratchPgUrl();
    const clients = [0, 1, 2].map(() => new SQL(url, { max: 1 }));
    try {
      const applied = await Promise.all(clients.map((c) => applyPgMigrations(c)));
      expect(applied.map((a) => a.length).sort()).toEqual([0, 0, pgMigrations.length]);
      const [row] = await clients[0]`SELECT count(*)::int AS n FROM schema_migrations`;
      expect(row.n).toBe(pgMigrations.length);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  test("every column that holds a subscriber's id sorts byte-wise, as the id does, so joins on it use the keys (issue 47)", async () => {
    const client = new SQL(await scratchPgUrl(), { max: 1 });
    try {
      await applyPgMigrations(client);
      const columns = await client`SELECT table_name || '.' || column_name AS col, collation_name AS collation FROM information_schema.columns
        WHERE table_schema = current_schema() AND (column_name IN ('subscriber_id', 'referrer_id', 'referee_id') OR (table_name = 'subscribers' AND column_name = 'id'))
        ORDER BY 1`;
      // the tables that name a subscriber (a new one belongs here, with its column in a migration like 0009)
      expect(columns.map((c: { col: string }) => c.col)).toEqual([
        "broadcast_recipients.subscriber_id", "data_requests.subscriber_id", "import_rows.subscriber_id", "milestone_rewards.subscriber_id",
        "outbox.subscriber_id", "referrals.referee_id", "referrals.referrer_id", "share_clicks.subscriber_id", "subscriber_tags.subscriber_id",
        "subscribers.id", "subscribers.referrer_id",
      ]);
      expect(columns.filter((c: { collation: string | null }) => c.collation !== "C")).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("the triggers keep the same rank counters, totals, version and daily counts as SQLite's, equal to a recount", async () => {
    const [onPg, onLite] = await Promise.all([pgEngine(), sqliteEngine()]);
    await script(onPg);
    await script(onLite);
    const [p, l] = [await counters(onPg), await counters(onLite)];
    expect(p).toEqual(l);
    expect(p.rankCounts).toEqual(p.recount);
    // 300 confirmed, 4 deleted; last_seq never moves back; a rename bumps the version once, a counter does not
    expect(p.waitlist).toEqual([{ subscribers_count: 296, last_seq: 300, views_count: 5, version: 2, name: "renamed" }]);
    expect(p.confirmed).toEqual([{ n: 296, last: 300 }]);
    // deletes do not take back a day's sign-ups
    expect(p.daily.reduce((n, d) => n + (d.sign_ups as number), 0)).toBe(300);
  });
});

test("a database the URL's user does not own: start-up says what to grant, in one line, exit 2, and creates nothing (issue 43)", async () => {
  const url = await scratchPgUrl();
  const admin = new SQL(url, { max: 1 });
  cleanups.push(() => admin.close());
  const role = `visitor_${Math.random().toString(36).slice(2, 8)}`;
  await admin.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
  cleanups.push(() => admin.unsafe(`DROP OWNED BY ${role}; DROP ROLE ${role}`).catch(() => {}));
  // what PostgreSQL 15+ does for a database someone else owns: no CREATE on schema public for others
  await admin.unsafe(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
  const asVisitor = url.replace(/\/\/[^@/]*@/, `//${role}:pw@`).replace(/^postgres(ql)?:\/\/(?![^/]*@)/, `postgres://${role}:pw@`);
  const r = await runCli(["account", "create", "--username", "nobody", "--json"], { DATABASE_URL: asVisitor });
  expect(r.code).toBe(2);
  const { error } = JSON.parse(r.stdout);
  expect(error.message).toContain("does not let this user create the schema");
  expect(error.message).toContain("GRANT CREATE ON SCHEMA public TO <user>");
  expect(error.message).not.toContain("pw@");
  expect((await admin`SELECT to_regclass('accounts')::text AS t`)[0].t).toBeNull();
  // doctor says the same, naming the user, rather than that serve would create the schema
  const d = await runCli(["doctor", "--json"], { DATABASE_URL: asVisitor });
  const database = (d.json.checks as { name: string; status: string; message: string }[]).find((c) => c.name === "database")!;
  expect(database.status).toBe("fail");
  expect(database.message).toContain(`may not create it`);
  expect(database.message).toContain(`GRANT CREATE ON SCHEMA public TO ${role}`);
});

test("sslmode=require against a server without TLS: start-up and doctor say so, in one line (issue 43)", async () => {
  const plain = await scratchPgUrl();
  const admin = new SQL(plain, { max: 1 });
  cleanups.push(() => admin.close());
  // a TEST_PG_URL server may offer TLS: then there is nothing to refuse
  if ((await admin`SHOW ssl`)[0].ssl === "on") return;
  const url = `${plain}?sslmode=require`;
  const r = await runCli(["account", "create", "--username", "nobody", "--json"], { DATABASE_URL: url });
  expect(r.code).toBe(2);
  const { error } = JSON.parse(r.stdout);
  expect(error.message).toContain("does not offer TLS, which sslmode=require in DATABASE_URL asks for");
  const d = await runCli(["doctor", "--json"], { DATABASE_URL: url });
  const database = (d.json.checks as { name: string; message: string }[]).find((c) => c.name === "database")!;
  expect(database.message).toContain("does not offer TLS");
});
