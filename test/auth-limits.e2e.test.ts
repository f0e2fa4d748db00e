// spec: Authentication, Account view, Errors, Limits; DESIGN §3 (plans) and §5; decisions "Keys, plans and limits". Over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { startServer, type Response, type TestServer } from "./support/server";
import { inOneWindow } from "./support/windows";

let s: TestServer;
beforeAll(async () => {
  // default rate limits: this file tests them
  s = await startServer();
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);
const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

const unauthorized = { statusCode: 401, error: "Unauthorized", message: expect.any(String) };
const forbidden = { statusCode: 403, error: "Forbidden", message: expect.any(String) };

async function createWaitlist(key: string, name = `Auth ${uniq()} ${uniq()}`) {
  const r = await s.request("POST", "/api/v1/waitlists", { key, body: { name } });
  expect(r.status, r.text).toBe(201);
  return r.body.data.waitlist as { id: string; key: string; name: string };
}

async function newAccountKey(key: string, name = `key ${uniq()}`) {
  const r = await s.request("POST", "/api/v1/account/keys", { key, body: { name } });
  expect(r.status, r.text).toBe(201);
  return r.body.data.api_key as { id: string; name: string; api_key: string; created_at: number };
}

async function newWaitlistKey(accountKey: string, waitlistKey: string) {
  const r = await s.request("POST", `/api/v1/waitlist/${waitlistKey}/api-key`, { key: accountKey });
  expect(r.status, r.text).toBe(201);
  return r.body.data.api_key.api_key as string;
}

const rate = (r: Response) => ({
  limit: r.headers.get("x-ratelimit-limit"),
  remaining: r.headers.get("x-ratelimit-remaining"),
  reset: r.headers.get("x-ratelimit-reset"),
});

describe("account keys", () => {
  test("a request without X-Api-Key is 401 {statusCode, error: Unauthorized, message}", async () => {
    for (const [method, path] of [["GET", "/api/v1/me"], ["GET", "/api/v1/waitlists"], ["POST", "/api/v1/waitlists"]] as const) {
      const r = await s.request(method, path, method === "POST" ? { body: { name: `x ${uniq()}` } } : {});
      expect(r.status).toBe(401);
      expect(r.body).toEqual(unauthorized);
      expect(Object.keys(r.body).sort()).toEqual(["error", "message", "statusCode"]);
    }
  });

  test("an unknown key and a revoked key (HTTP DELETE or CLI key revoke) get the byte-identical 401 'Invalid API key'", async () => {
    const a = await s.account();
    const unknown = await s.request("GET", "/api/v1/me", { key: `wl_acct_${"x".repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid API key" });

    const viaHttp = await newAccountKey(a.key);
    expect((await s.request("GET", "/api/v1/me", { key: viaHttp.api_key })).status).toBe(200);
    expect((await s.request("DELETE", `/api/v1/account/keys/${viaHttp.id}`, { key: a.key })).status).toBe(200);
    const revokedHttp = await s.request("GET", "/api/v1/me", { key: viaHttp.api_key });
    expect(revokedHttp.status).toBe(401);
    expect(revokedHttp.text).toBe(unknown.text);

    const viaCli = await s.cli("key", "create", "--username", a.username, "--label", "cli", "--json");
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect((await s.request("GET", "/api/v1/me", { key: viaCli.json.api_key })).status).toBe(200);
    const revoke = await s.cli("key", "revoke", "--id", viaCli.json.id, "--json");
    expect(revoke.code, revoke.stderr).toBe(0);
    const revokedCli = await s.request("GET", "/api/v1/me", { key: viaCli.json.api_key });
    expect(revokedCli.status).toBe(401);
    expect(revokedCli.text).toBe(unknown.text);
  });

  test("POST /api/v1/account/keys returns a wl_acct_ key once (201) that works at once; DELETE revokes it (200, then 401)", async () => {
    const a = await s.account();
    const before = Date.now();
    const r = await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "deploy bot" } });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    const k = r.body.data.api_key;
    // issue 48 added what the key list shows: its prefix, scopes and waitlists
    expect(Object.keys(k).sort()).toEqual(["api_key", "created_at", "id", "name", "prefix", "scopes", "waitlists"]);
    expect(k).toMatchObject({ scopes: ["read", "write"], waitlists: null, prefix: k.api_key.slice(0, 12) });
    expect(k.name).toBe("deploy bot");
    expect(k.api_key).toMatch(/^wl_acct_[A-Za-z0-9]{32,}$/);
    expect(typeof k.id).toBe("string");
    expect(k.created_at).toBeGreaterThanOrEqual(before);
    expect(k.created_at).toBeLessThanOrEqual(Date.now());

    const me = await s.request("GET", "/api/v1/me", { key: k.api_key });
    expect(me.status).toBe(200);
    expect(me.body.data.account.id).toBe(a.id);
    expect(me.body.data.api_key.name).toBe("deploy bot");
    expect(me.body.data.api_key.created_at).toBe(k.created_at);

    const del = await s.request("DELETE", `/api/v1/account/keys/${k.id}`, { key: a.key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    const after = await s.request("GET", "/api/v1/me", { key: k.api_key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid API key" });
    // the account's other key is untouched
    expect((await s.request("GET", "/api/v1/me", { key: a.key })).status).toBe(200);
  });

  test("DELETE of an unknown key id is 404", async () => {
    const a = await s.account();
    const r = await s.request("DELETE", `/api/v1/account/keys/key_${uniq()}nosuchkey`, { key: a.key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ statusCode: 404, error: "Not Found", message: expect.any(String) });
  });

  test("an account cannot revoke another account's key: 404, and the key still works", async () => {
    const a = await s.account();
    const b = await s.account();
    const k = await newAccountKey(a.key);
    const r = await s.request("DELETE", `/api/v1/account/keys/${k.id}`, { key: b.key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ statusCode: 404, error: "Not Found", message: expect.any(String) });
    const me = await s.request("GET", "/api/v1/me", { key: k.api_key });
    expect(me.status).toBe(200);
    expect(me.body.data.account.id).toBe(a.id);
  });

  test("only the key's SHA-256 hex is stored: no column of api_keys holds the plaintext", async () => {
    const a = await s.account();
    const k = await newAccountKey(a.key);
    const wl = await createWaitlist(a.key);
    const wlKey = await newWaitlistKey(a.key, wl.key);
    const db = await openDatabase({ url: s.dbUrl });
    try {
      const rows = await db.rows(sql`SELECT * FROM api_keys`);
      expect(rows.length).toBeGreaterThanOrEqual(3);
      for (const row of rows) {
        for (const value of Object.values(row)) {
          for (const plain of [a.key, k.api_key, wlKey]) expect(String(value)).not.toContain(plain);
        }
      }
      const stored = await db.rows<{ hash: string }>(sql`SELECT hash FROM api_keys WHERE id = ${k.id}`);
      expect(stored.length).toBe(1);
      expect(stored[0].hash).toBe(sha256(k.api_key));
      const byHash = (plain: string) => db.rows(sql`SELECT id FROM api_keys WHERE hash = ${sha256(plain)}`);
      expect((await byHash(a.key)).length).toBe(1);
      expect((await byHash(wlKey)).length).toBe(1);
    } finally {
      await db.close();
    }
  });
});

describe("per-waitlist keys", () => {
  test("POST /waitlist/{key}/api-key returns a wl_ key (not wl_acct_) that reads its own waitlist's settings", async () => {
    const a = await s.account("business");
    const wl = await createWaitlist(a.key);
    const r = await s.request("POST", `/api/v1/waitlist/${wl.key}/api-key`, { key: a.key });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    const key = r.body.data.api_key.api_key;
    expect(key).toMatch(/^wl_[A-Za-z0-9]+$/);
    expect(key.startsWith("wl_acct_")).toBe(false);
    const settings = await s.request("GET", `/api/v1/waitlist/${wl.key}/settings`, { key });
    expect(settings.status).toBe(200);
    expect(settings.body.success).toBe(true);
  });

  test("a per-waitlist key gets 401 on Get Account, Create Waitlist and List Waitlists", async () => {
    const a = await s.account("business");
    const wl = await createWaitlist(a.key);
    const key = await newWaitlistKey(a.key, wl.key);
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/v1/me"],
      ["POST", "/api/v1/waitlists", { name: `Nope ${uniq()}` }],
      ["GET", "/api/v1/waitlists"],
    ];
    for (const [method, path, body] of calls) {
      const r = await s.request(method, path, { key, body });
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body).toEqual(unauthorized);
    }
    // and created nothing
    expect((await s.request("GET", "/api/v1/waitlists", { key: a.key })).body.data.total).toBe(1);
  });

  test("a per-waitlist key gets 401 on another waitlist of the same account", async () => {
    const a = await s.account("business");
    const one = await createWaitlist(a.key);
    const two = await createWaitlist(a.key);
    const key = await newWaitlistKey(a.key, one.key);
    const r = await s.request("GET", `/api/v1/waitlist/${two.key}/settings`, { key });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(unauthorized);
  });

  test("regenerating the per-waitlist key makes the old one 401 and the new one work", async () => {
    const a = await s.account("business");
    const wl = await createWaitlist(a.key);
    const first = await newWaitlistKey(a.key, wl.key);
    expect((await s.request("GET", `/api/v1/waitlist/${wl.key}/settings`, { key: first })).status).toBe(200);
    const second = await newWaitlistKey(a.key, wl.key);
    expect(second).not.toBe(first);
    const old = await s.request("GET", `/api/v1/waitlist/${wl.key}/settings`, { key: first });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid API key" });
    expect((await s.request("GET", `/api/v1/waitlist/${wl.key}/settings`, { key: second })).status).toBe(200);
  });

  test("a per-waitlist key of an account below Growth gets 403 {statusCode, error: Forbidden, message}; Pro passes as Growth", async () => {
    const a = await s.account("business");
    const wl = await createWaitlist(a.key);
    const key = await newWaitlistKey(a.key, wl.key);
    const path = `/api/v1/waitlist/${wl.key}/settings`;
    for (const plan of ["launch", "free"]) {
      const set = await s.cli("account", "set-plan", "--username", a.username, "--plan", plan);
      expect(set.code, set.stderr).toBe(0);
      const r = await s.request("GET", path, { key });
      expect(r.status, plan).toBe(403);
      expect(r.body).toEqual(forbidden);
    }
    for (const plan of ["pro", "growth"]) {
      await s.cli("account", "set-plan", "--username", a.username, "--plan", plan);
      expect((await s.request("GET", path, { key })).status, plan).toBe(200);
    }
  });
});

describe("GET /api/v1/me: Account view", () => {
  test("api_key.last_used_at is null on first use, then the previous call's time (one call behind)", async () => {
    const before = Date.now();
    const a = await s.account("business", ["--label", "laptop"]);
    const created = Date.now();
    const firstStart = Date.now();
    const first = await s.request("GET", "/api/v1/me", { key: a.key });
    expect(first.status).toBe(200);
    expect(first.body.data.api_key.last_used_at).toBeNull();
    expect(first.body.data.api_key.name).toBe("laptop");
    expect(first.body.data.api_key.created_at).toBeGreaterThanOrEqual(before);
    expect(first.body.data.api_key.created_at).toBeLessThanOrEqual(created);

    const secondStart = Date.now();
    const second = await s.request("GET", "/api/v1/me", { key: a.key });
    const used = second.body.data.api_key.last_used_at;
    expect(typeof used).toBe("number");
    expect(used).toBeGreaterThanOrEqual(firstStart);
    expect(used).toBeLessThanOrEqual(secondStart);
    expect(second.body.data.api_key.created_at).toBe(first.body.data.api_key.created_at);
  });

  const plans = [
    { plan: "free", name: "Free", api_access: false, max: 1, credits: 0 },
    { plan: "launch", name: "Launch", api_access: false, max: 3, credits: 10 },
    { plan: "pro", name: "Pro", api_access: true, max: 10, credits: 10 },
    { plan: "growth", name: "Growth", api_access: true, max: 25, credits: 10 },
    { plan: "business", name: "Business", api_access: true, max: "unlimited", credits: 10 },
  ] as const;
  for (const p of plans) {
    test(`${p.plan}: plan ${p.name}, api_access ${p.api_access}, waitlists.max ${p.max}, ai_credits.remaining ${p.credits}; never the key or its hash`, async () => {
      const a = await s.account(p.plan, ["--label", `label-${p.plan}`]);
      const r = await s.request("GET", "/api/v1/me", { key: a.key });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        success: true,
        data: {
          account: { id: a.id, username: a.username },
          plan: { name: p.name, api_access: p.api_access },
          waitlists: { count: 0, max: p.max, can_create: true },
          ai_credits: { remaining: p.credits },
          api_key: { name: `label-${p.plan}`, created_at: expect.any(Number), last_used_at: null },
        },
      });
      expect(r.text).not.toContain(a.key);
      expect(r.text).not.toContain(a.key.slice("wl_acct_".length));
      expect(r.text).not.toContain(sha256(a.key));
    });
  }
});

describe("waitlist limit per plan", () => {
  test("free: the first waitlist is allowed, the second is 403 stating the limit, and nothing is created", async () => {
    const a = await s.account("free");
    await createWaitlist(a.key);
    const me = await s.request("GET", "/api/v1/me", { key: a.key });
    expect(me.body.data.waitlists).toEqual({ count: 1, max: 1, can_create: false });
    const r = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Second ${uniq()}` } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(forbidden);
    expect(r.body.message).toContain("1");
    expect((await s.request("GET", "/api/v1/waitlists", { key: a.key })).body.data.total).toBe(1);
  });

  test("launch: three waitlists are allowed, the fourth is 403 stating the limit", async () => {
    const a = await s.account("launch");
    for (let i = 0; i < 3; i++) await createWaitlist(a.key);
    const me = await s.request("GET", "/api/v1/me", { key: a.key });
    expect(me.body.data.waitlists).toEqual({ count: 3, max: 3, can_create: false });
    const r = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Fourth ${uniq()}` } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(forbidden);
    expect(r.body.message).toContain("3");
    expect((await s.request("GET", "/api/v1/waitlists", { key: a.key })).body.data.total).toBe(3);
  });

  test("an account downgraded to free with 2 waitlists has can_create false and cannot create", async () => {
    const a = await s.account("business");
    await createWaitlist(a.key);
    await createWaitlist(a.key);
    const set = await s.cli("account", "set-plan", "--username", a.username, "--plan", "free");
    expect(set.code, set.stderr).toBe(0);
    const me = await s.request("GET", "/api/v1/me", { key: a.key });
    expect(me.body.data.plan).toEqual({ name: "Free", api_access: false });
    expect(me.body.data.waitlists).toEqual({ count: 2, max: 1, can_create: false });
    const r = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Third ${uniq()}` } });
    expect(r.status).toBe(403);
  });
});

describe("rate limits", () => {
  function expectHeaders(r: Response, t0: number, what: string) {
    const h = rate(r);
    expect(h.limit, `${what}: X-RateLimit-Limit`).toMatch(/^[1-9]\d*$/);
    expect(h.remaining, `${what}: X-RateLimit-Remaining`).toMatch(/^\d+$/);
    expect(h.reset, `${what}: X-RateLimit-Reset`).toMatch(/^\d{10}$/);
    // whole Unix seconds: the end of the current one-minute window
    expect(Number(h.reset), what).toBeGreaterThan(t0 / 1000);
    expect(Number(h.reset), what).toBeLessThanOrEqual(Date.now() / 1000 + 60);
    expect(Number(h.remaining), what).toBeLessThan(Number(h.limit));
  }

  test("every API response carries X-RateLimit-Limit/Remaining/Reset in whole Unix seconds: 200, 400, 401, 403, 404 (429 below)", async () => {
    const biz = await s.account("business");
    const free = await s.account("free");
    await createWaitlist(free.key);
    const t0 = Date.now();
    const cases: [number, Response][] = [
      [200, await s.request("GET", "/api/v1/me", { key: biz.key })],
      [200, await s.request("GET", "/api/v1/waitlists", { key: biz.key })],
      [400, await s.request("POST", "/api/v1/waitlists", { key: biz.key, body: { name: "" } })],
      [401, await s.request("GET", "/api/v1/me")],
      [401, await s.request("GET", "/api/v1/me", { key: "wl_acct_doesnotexist0000000000000000000" })],
      [403, await s.request("POST", "/api/v1/waitlists", { key: free.key, body: { name: `Over ${uniq()}` } })],
      [404, await s.request("DELETE", `/api/v1/account/keys/key_nosuch${uniq()}`, { key: biz.key })],
    ];
    for (const [status, r] of cases) {
      expect(r.status).toBe(status);
      expectHeaders(r, t0, `${status}`);
    }
    // 429: see the Create Waitlist test below, which checks headers on the refused request
  });

  test("Remaining is Limit-1 on a fresh key's first request and falls by 1 per request", async () => {
    await inOneWindow(async (track) => {
      const a = await s.account("business");
      const t0 = Date.now();
      const first = track(await s.request("GET", "/api/v1/me", { key: a.key }));
      expectHeaders(first, t0, "first");
      expect(rate(first)).toMatchObject({ limit: "120", remaining: "119" });
      const second = track(await s.request("GET", "/api/v1/me", { key: a.key }));
      const third = track(await s.request("GET", "/api/v1/me", { key: a.key }));
      expect(rate(second)).toMatchObject({ limit: "120", remaining: "118", reset: rate(first).reset });
      expect(rate(third)).toMatchObject({ limit: "120", remaining: "117", reset: rate(first).reset });
    });
  });

  const limits: [string, number, number, number][] = [
    // plan, GET /me, GET /waitlists, POST /waitlists (spec: Limits; DESIGN §3: Pro as Growth but Get Account 20)
    ["free", 20, 10, 5],
    ["launch", 20, 10, 5],
    ["pro", 20, 60, 5],
    ["growth", 60, 60, 5],
    ["business", 120, 60, 5],
  ];
  for (const [plan, me, list, create] of limits) {
    test(`${plan}: Get Account ${me}/min, List Waitlists ${list}/min, Create Waitlist ${create}/min, each its own bucket`, async () => {
      await inOneWindow(async (track) => {
        const a = await s.account(plan);
        const meR = track(await s.request("GET", "/api/v1/me", { key: a.key }));
        expect(rate(meR)).toMatchObject({ limit: String(me), remaining: String(me - 1) });
        const listR = track(await s.request("GET", "/api/v1/waitlists", { key: a.key }));
        expect(rate(listR)).toMatchObject({ limit: String(list), remaining: String(list - 1) });
        const createR = track(await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Lim ${uniq()} ${uniq()}` } }));
        expect(createR.status).toBe(201);
        expect(rate(createR)).toMatchObject({ limit: String(create), remaining: String(create - 1) });
        const meR2 = track(await s.request("GET", "/api/v1/me", { key: a.key }));
        expect(rate(meR2)).toMatchObject({ limit: String(me), remaining: String(me - 2) });
      });
    });
  }

  test("Create Waitlist over 5/min is 429 with data.retry_after, Remaining 0, and creates nothing; another key of the account is not limited", async () => {
    await inOneWindow(async (track) => {
      const a = await s.account("business");
      const other = await s.cli("key", "create", "--username", a.username, "--label", "second", "--json");
      expect(other.code, other.stderr).toBe(0);
      for (let i = 1; i <= 5; i++) {
        const r = track(await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Burst ${i} ${uniq()} ${uniq()}` } }));
        expect(r.status, `create #${i}`).toBe(201);
        expect(rate(r)).toMatchObject({ limit: "5", remaining: String(5 - i) });
      }
      const t0 = Date.now();
      const refused = track(await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Burst 6 ${uniq()} ${uniq()}` } }));
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, error: "Too Many Requests", message: expect.any(String), data: { retry_after: expect.any(Number) } });
      const retry = refused.body.data.retry_after;
      expect(Number.isInteger(retry)).toBe(true);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expectHeaders(refused, t0, "429");
      expect(rate(refused)).toMatchObject({ limit: "5", remaining: "0" });
      // issue 16: every 429 says when, in the header as in the body
      expect(refused.headers.get("retry-after")).toBe(String(retry));
      // retry_after points at the window's end
      expect(Math.abs(Number(rate(refused).reset) - Math.ceil(t0 / 1000) - retry)).toBeLessThanOrEqual(1);

      // the list has its own bucket, so it can confirm nothing was created
      const list = track(await s.request("GET", "/api/v1/waitlists", { key: a.key }));
      expect(list.status).toBe(200);
      expect(list.body.data.total).toBe(5);

      // per key: the account's other key has its own fresh window
      const otherR = track(await s.request("POST", "/api/v1/waitlists", { key: other.json.api_key, body: { name: `Other key ${uniq()} ${uniq()}` } }));
      expect(otherR.status).toBe(201);
      expect(rate(otherR)).toMatchObject({ limit: "5", remaining: "4" });
    });
  });
});

describe("RATE_LIMITS=off", () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startServer({ env: { RATE_LIMITS: "off" } });
  });
  afterAll(() => off.stop());

  test("7 creates in a row all succeed (201) and still carry rate-limit headers describing a fresh window", async () => {
    const a = await off.account("business");
    const t0 = Date.now();
    for (let i = 1; i <= 7; i++) {
      const r = await off.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Off ${i} ${uniq()} ${uniq()}` } });
      expect(r.status, `create #${i}`).toBe(201);
      expect(rate(r)).toMatchObject({ limit: "5", remaining: "4" });
      expect(rate(r).reset).toMatch(/^\d{10}$/);
      expect(Number(rate(r).reset)).toBeGreaterThan(t0 / 1000);
      expect(Number(rate(r).reset)).toBeLessThanOrEqual(Date.now() / 1000 + 60);
    }
    expect((await off.request("GET", "/api/v1/waitlists", { key: a.key })).body.data.total).toBe(7);
  });
});
