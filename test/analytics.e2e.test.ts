// spec: Analytics (log-view, stats) and DESIGN §4 "Analytics"; DESIGN §9 daily stats. Over real HTTP,
// plus the 24 h window and the prune job against the database directly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { DEDUPE_MS, knownView, logView, pruneViewDedupe, visitorKey } from "../src/analytics/service";
import { startServer, type TestServer } from "./support/server";
import { scratchDatabase } from "./support/db";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

async function waitlist(plan = "business", body: Record<string, unknown> = {}) {
  const { key, username } = await s.account(plan);
  const r = await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Views ${uniq()}`, ...body } });
  return { key, username, w: r.body.data.waitlist, path: `/api/v1/waitlist/${r.body.data.waitlist.key}` };
}

describe("POST .../log-view", () => {
  test("a visitor_id is counted once per 24 hours; the repeat is 200 with success false", async () => {
    const { key, path } = await waitlist();
    const first = await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "visitor-1", metadata: { referring_domain: "news.example.com" } } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, message: expect.any(String) });
    const again = await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "visitor-1" } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: false, message: expect.any(String) });
    const other = await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "visitor-2" } });
    expect(other.body.success).toBe(true);
    const stats = await s.request("GET", `${path}/stats`, { key });
    expect(stats.body.data.views_total).toBe(2);
  });

  test("without visitor_id the visitor is IP + User-Agent: same pair deduplicated, another User-Agent counted", async () => {
    const { key, path } = await waitlist();
    const as = (ua: string) => s.request("POST", `${path}/log-view`, { key, headers: { "user-agent": ua } });
    expect((await as("Browser A")).body.success).toBe(true);
    expect((await as("Browser A")).body.success).toBe(false);
    expect((await as("Browser B")).body.success).toBe(true);
    // no body at all is allowed (spec: body optional)
    const bare = await fetch(`${s.url}${path}/log-view`, { method: "POST", headers: { "x-api-key": key, "user-agent": "Browser C" } });
    expect(bare.status).toBe(200);
    expect(((await bare.json()) as { success: boolean }).success).toBe(true);
  });

  test("no raw IP is kept for views: the dedupe key is a salted hash", async () => {
    const { key, path, w } = await waitlist();
    await s.request("POST", `${path}/log-view`, { key, headers: { "user-agent": "Hashed UA" } });
    const db = await openDatabase({ url: s.dbUrl });
    try {
      const rows = await db.rows<{ visitor: string }>(sql`SELECT d.visitor FROM view_dedupe d JOIN waitlists w ON w.id = d.waitlist_id WHERE w.key = ${w.key}`);
      expect(rows.length).toBe(1);
      expect(rows[0]!.visitor).toMatch(/^h:[0-9a-f]{64}$/);
      expect(rows[0]!.visitor).not.toContain("127.0.0.1");
    } finally {
      await db.close();
    }
  });

  test("a bad body is 400 in the log-view shape {success:false, error:{code:'invalid_request', message}}", async () => {
    const { key, path } = await waitlist();
    for (const [body, field] of [
      [{ visitor_id: 5 }, "visitor_id"],
      [{ visitor_id: "x".repeat(201) }, "visitor_id"],
      [{ metadata: { referring_domain: 7 } }, "referring_domain"],
      [{ metadata: "x" }, "metadata"],
      [{ other: true }, "other"],
    ] as const) {
      const r = await s.request("POST", `${path}/log-view`, { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining(field) } });
    }
    const bad = await s.request("POST", `${path}/log-view`, { key, raw: "{nope", headers: { "content-type": "application/json" } });
    expect(bad.body).toEqual({ success: false, error: { code: "invalid_request", message: "Request body is not valid JSON" } });
  });

  test("its 401 and 403 use {statusCode, error, message}; log-view needs Growth or higher", async () => {
    const { path } = await waitlist();
    const r = await s.request("POST", `${path}/log-view`, { key: "wl_acct_nope", body: {} });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid API key" });
    for (const plan of ["free", "launch"]) {
      const f = await waitlist(plan);
      const denied = await s.request("POST", `${f.path}/log-view`, { key: f.key, body: { visitor_id: "v" } });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ statusCode: 403, error: "Forbidden", message: expect.any(String) });
      expect((await s.request("GET", `${f.path}/stats`, { key: f.key })).status).toBe(200);
    }
  });
});

describe("GET .../stats", () => {
  test("counts confirmed subscribers and views, and shows whether the referral program is on", async () => {
    const { key, path } = await waitlist("business", { referral_rewards: { enabled: true } });
    for (const email of ["a@example.com", "b@example.com", "c@example.com"]) await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    await s.request("DELETE", `${path}/subscribers/b@example.com`, { key });
    await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "one" } });
    const r = await s.request("GET", `${path}/stats`, { key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { subscribers_total: 2, views_total: 1, referral_program_enabled: true } });
    const list = await s.request("GET", "/api/v1/waitlists", { key });
    expect(list.body.data.waitlists[0]).toMatchObject({ subscribers: 2, views: 1 });
  });

  test("a per-waitlist key reads stats on Growth; an account key on every plan", async () => {
    const { key, path, w } = await waitlist("growth");
    const wk = (await s.request("POST", `/api/v1/waitlist/${w.key}/api-key`, { key })).body.data.api_key.api_key;
    expect((await s.request("GET", `${path}/stats`, { key: wk })).status).toBe(200);
  });
});

describe("GET .../stats/daily", () => {
  test("the last N UTC days, oldest first, zero-filled, with today's sign-ups and views", async () => {
    const { key, path } = await waitlist();
    await s.request("POST", `${path}/sign-up`, { key, body: { email: "d1@example.com" } });
    await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: "d" } });
    const r = await s.request("GET", `${path}/stats/daily?days=3`, { key });
    expect(r.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const dayMs = 86_400_000;
    expect(r.body.data.days).toEqual([
      { date: new Date(Date.now() - 2 * dayMs).toISOString().slice(0, 10), sign_ups: 0, views: 0 },
      { date: new Date(Date.now() - dayMs).toISOString().slice(0, 10), sign_ups: 0, views: 0 },
      { date: today, sign_ups: 1, views: 1 },
    ]);
    expect((await s.request("GET", `${path}/stats/daily`, { key })).body.data.days.length).toBe(30);
    for (const bad of ["0", "366", "abc", "1.5"]) {
      const b = await s.request("GET", `${path}/stats/daily?days=${bad}`, { key });
      expect(b.status).toBe(400);
      expect(b.body.message).toContain("days");
    }
  });
});

describe("the 24-hour window and the prune job", () => {
  let db: Db;
  let close: () => void;
  beforeAll(async () => {
    ({ db, close } = await scratchDatabase());
  });
  afterAll(() => close());

  test("a visitor counts again once 24 hours have passed since the first counted view", async () => {
    const t0 = Date.UTC(2026, 0, 1, 10);
    expect(await logView(db, "w", "id:v", undefined, t0)).toBe(true);
    expect(await logView(db, "w", "id:v", undefined, t0 + DEDUPE_MS - 1)).toBe(false);
    expect(await logView(db, "w", "id:v", undefined, t0 + DEDUPE_MS)).toBe(true);
    const [w] = await db.rows<{ views_count: number }>(sql`SELECT views_count FROM waitlists WHERE id = 'w'`);
    expect(w.views_count).toBe(2);
    const days = await db.rows<{ date: string; views: number }>(sql`SELECT date, views FROM daily_stats WHERE waitlist_id = 'w' ORDER BY date`);
    expect(days).toEqual([
      { date: "2026-01-01", views: 1 },
      { date: "2026-01-02", views: 1 },
    ]);
  });

  test("the hash salt changes with the UTC day, so yesterday's hash cannot be matched today", async () => {
    const day1 = Date.UTC(2026, 0, 1, 12);
    const a = await visitorKey(db, null, "203.0.113.9", "UA", day1);
    expect(await visitorKey(db, null, "203.0.113.9", "UA", day1 + 3_600_000)).toBe(a);
    expect(await visitorKey(db, null, "203.0.113.9", "UA", day1 + 86_400_000)).not.toBe(a);
    expect(await visitorKey(db, "given", "203.0.113.9", "UA", day1)).toBe("id:given");
  });

  test("a page view this process knows was counted is known without waiting; any other is asked of the database", async () => {
    const t0 = Date.UTC(2026, 2, 1, 9);
    expect(knownView(db, "w", "198.51.100.7", "UA", t0)).toBe(false);
    const key = await visitorKey(db, null, "198.51.100.7", "UA", t0);
    // hashed, not yet counted
    expect(knownView(db, "w", "198.51.100.7", "UA", t0)).toBe(false);
    expect(await logView(db, "w", key, undefined, t0)).toBe(true);
    expect(knownView(db, "w", "198.51.100.7", "UA", t0 + 1)).toBe(true);
    expect(knownView(db, "w", "198.51.100.7", "UA", t0 + 14 * 3_600_000)).toBe(true);
    // another visitor, another waitlist, or the next UTC day (another hash, not made yet)
    expect(knownView(db, "w", "198.51.100.8", "UA", t0 + 1)).toBe(false);
    expect(knownView(db, "w", "198.51.100.7", "other UA", t0 + 1)).toBe(false);
    expect(knownView(db, "w2", "198.51.100.7", "UA", t0 + 1)).toBe(false);
    expect(knownView(db, "w", "198.51.100.7", "UA", t0 + DEDUPE_MS)).toBe(false);
    expect(knownView(db, "w", "198.51.100.7", "UA", Date.UTC(2026, 2, 2, 1))).toBe(false);
  });

  test("the prune job removes only expired dedupe rows", async () => {
    const t0 = Date.UTC(2026, 1, 1);
    await logView(db, "w", "id:old", undefined, t0);
    await logView(db, "w", "id:new", undefined, t0 + DEDUPE_MS);
    await pruneViewDedupe(db, t0 + DEDUPE_MS + 1);
    const left = await db.rows<{ visitor: string }>(sql`SELECT visitor FROM view_dedupe WHERE visitor IN ('id:old', 'id:new')`);
    expect(left.map((r) => r.visitor)).toEqual(["id:new"]);
  });
});
