// Moving a database between engines (issue 18 item 5): a populated embedded database copied to PostgreSQL and
// back loses nothing: every row of every table comes back equal, and a server on the copy answers as before.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { copyDatabase, countRows, tablesToCopy } from "../src/db/copy";
import { openDatabase } from "../src/db/open";
import type { Db } from "../src/db/db";
import type { Store } from "../src/db/store";
import { scratchPgUrl } from "./support/pg";
import { startServer, type TestServer } from "./support/server";

const dir = mkdtempSync(join(tmpdir(), "waitlist-copy-"));
const opened: Db[] = [];
let s: TestServer;
let key = "";
let path = "";
const emails: string[] = [];

beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: `file:${join(dir, "source.db")}` });
  ({ key } = await s.account("business"));
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Copy me", referral_rewards: { enabled: true } } })).body.data.waitlist;
  path = `/api/v1/waitlist/${w.key}`;
  await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: false, leaderboard: true, milestones: [{ referrals: 2, reward: "Stickers", tag: "Fan" }] } });
  let code = "";
  for (let i = 0; i < 40; i++) {
    const email = `p${i}@example.com`;
    emails.push(email);
    const r = await s.request("POST", `${path}/sign-up`, {
      key,
      body: { email, name: `P ${i}`, metadata: i % 5 && code ? { referred_by: code } : { plan: "x", utm_source: "news", referrer_host: "news.example" } },
    });
    if (i % 5 === 0) code = r.body.referral_code;
    // issue 46: share clicks and views by source are copied too
    if (i === 0) await fetch(`${s.url}/t/${r.body.sign_up_token}/share`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"channel":"x"}' });
  }
  await s.request("PUT", `${path}/subscribers/${encodeURIComponent("p7@example.com")}`, { key, body: { points: 500 } });
  await s.request("POST", `${path}/tags`, { key, body: { name: "VIP", color: "purple" } });
  await s.request("POST", `${path}/subscribers/${encodeURIComponent("p3@example.com")}/tags`, { key, body: { tags: ["VIP"] } });
  await s.request("POST", `${path}/subscribers/invite`, { key, body: { count: 3 } });
  await s.request("DELETE", `${path}/subscribers/${encodeURIComponent("p11@example.com")}`, { key });
  await s.request("POST", `${path}/landing-page`, { key, body: { headline: "Soon" } });
  await s.request("POST", `/api/v1/waitlist/${w.key}/log-view`, { key, body: { visitor_id: "v1" } });
  await s.request("POST", `/api/v1/waitlist/${w.key}/log-view`, { key, body: { visitor_id: "v2", metadata: { utm_source: "ads", ref: code } } });
  await s.stop({ keep: true });
});

afterAll(async () => {
  for (const o of opened) await o.close();
  if (s) await s.stop({ keep: true }).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

async function open(url: string): Promise<Store> {
  const o = await openDatabase({ url, poolSize: 4 });
  opened.push(o);
  return o;
}

/** Every table's rows in key order, values normalized (0/1 and booleans alike), for an exact comparison. */
async function dump(store: Store) {
  const out: Record<string, unknown[]> = {};
  for (const t of tablesToCopy()) {
    const rows = await store.rows<Record<string, unknown>>(sql`SELECT ${sql.raw(t.columns.map((c) => `"${c.name}"`).join(", "))} FROM ${sql.raw(`"${t.name}"`)}`);
    out[t.name] = rows
      .map((r) => t.columns.map((c) => (c.isBoolean ? Boolean(Number(r[c.name]) || r[c.name] === true) : r[c.name] === null ? null : typeof r[c.name] === "bigint" ? Number(r[c.name]) : r[c.name])))
      .map((r) => JSON.stringify(r))
      .sort();
  }
  return out;
}

describe("copying between engines", () => {
  test("embedded -> PostgreSQL -> embedded: every row of every table is equal, counters included", async () => {
    const source = await open(`file:${join(dir, "source.db")}`);
    const pg = await open(await scratchPgUrl());
    const back = await open(`file:${join(dir, "back.db")}`);
    const progress: string[] = [];
    const there = await copyDatabase(source, pg, { batch: 7, onProgress: (p) => progress.push(p.table) });
    expect(there.tables.subscribers).toBe(39);
    // the source holds a bit of everything: credited referrals, a milestone, a tag, invites, a page, a view, an outbox
    expect(there.tables).toMatchObject({ accounts: 1, waitlists: 1, landing_pages: 1, view_dedupe: 2 });
    for (const t of ["referrals", "milestone_rewards", "subscriber_tags", "rank_counts", "daily_stats", "outbox", "api_keys", "source_views", "share_clicks"]) expect(there.tables[t]).toBeGreaterThan(0);
    expect(progress.filter((t) => t === "subscribers").length).toBe(Math.ceil(39 / 7));
    const original = await dump(source);
    expect(await dump(pg)).toEqual(original);
    await copyDatabase(pg, back, { batch: 7 });
    expect(await dump(back)).toEqual(original);
    expect(await countRows(back)).toEqual(there.tables);
    // the counters the triggers keep are the source's, not counted twice
    const [w] = await back.rows<{ subscribers_count: number }>(sql`SELECT subscribers_count FROM waitlists`);
    expect(Number(w.subscribers_count)).toBe(39);
  });

  test("a server on the round-tripped copy answers every subscriber as the original did", async () => {
    const answers = async (server: TestServer) => {
      const out: unknown[] = [];
      for (const email of emails) {
        const r = await server.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key });
        out.push([r.status, r.body?.data?.subscriber?.position ?? null, r.body?.data?.subscriber?.points ?? null, r.body?.data?.subscriber?.status ?? null]);
      }
      return out;
    };
    const original = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: `file:${join(dir, "source.db")}` });
    const before = await answers(original);
    await original.stop({ keep: true });
    const copy = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: `file:${join(dir, "back.db")}` });
    try {
      expect(await answers(copy)).toEqual(before);
      expect(before.filter((a: any) => a[0] === 200).length).toBe(39);
    } finally {
      await copy.stop({ keep: true });
    }
  });
});
