// Issue 48 items 4 and 5 over HTTP, on either engine: keys listed without their secret, any key revocable (the first
// one too), read-only keys and keys limited to named waitlists refused with 403; and the audit log: every change made
// through the API recorded once, in the change's own transaction, with its actor, action, target, IP and user agent,
// never a secret or a full email; nothing for a read, a refused change or a visitor's sign-up.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ACTIONS, UNAUDITED } from "../src/audit/actions";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
  ({ key } = await s.account("business"));
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

async function newAccount() {
  const a = await s.account("business");
  const waitlist = async () => (await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Keys ${uniq()}` } })).body.data.waitlist as { id: string; key: string };
  return { ...a, waitlist };
}

const audit = async (k: string, query = "") => {
  const r = await s.request("GET", `/api/v1/account/audit${query}`, { key: k });
  expect(r.status).toBe(200);
  return r.body.data as { entries: any[]; next_cursor: string | null };
};

describe("keys you can see (issue 48 item 4)", () => {
  test("GET /account/keys lists every key that works, account and per-waitlist, with a prefix and never the secret", async () => {
    const a = await newAccount();
    const w = await a.waitlist();
    const made = (await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "CI" } })).body.data.api_key;
    const wk = (await s.request("POST", `/api/v1/waitlist/${w.key}/api-key`, { key: a.key })).body.data.api_key.api_key as string;
    const r = await s.request("GET", "/api/v1/account/keys", { key: a.key });
    expect(r.status).toBe(200);
    const keys = r.body.data.keys as any[];
    expect(keys.map((k) => [k.kind, k.name])).toEqual([
      ["account", expect.any(String)],
      ["account", "CI"],
      ["waitlist", "waitlist"],
    ]);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual(["created_at", "created_by", "id", "kind", "last_used_at", "name", "prefix", "scopes", "waitlists"]);
      expect(k.scopes).toEqual(["read", "write"]);
    }
    // the first key was used for this very list: its last use is recorded
    expect(keys[1]).toMatchObject({ id: made.id, prefix: made.api_key.slice(0, 12), created_by: keys[0].id, waitlists: null });
    expect(made.api_key.startsWith(keys[1].prefix)).toBe(true);
    expect(keys[2]).toMatchObject({ waitlists: [w.key], created_by: keys[0].id });
    expect(wk.startsWith(keys[2].prefix)).toBe(true);
    for (const secret of [a.key, made.api_key, wk]) expect(r.text).not.toContain(secret);
  });

  test("the first key can be revoked, by another key or by itself; it is refused at once", async () => {
    const a = await newAccount();
    const second = (await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "second" } })).body.data.api_key;
    const first = (await s.request("GET", "/api/v1/account/keys", { key: a.key })).body.data.keys[0];
    expect((await s.request("DELETE", `/api/v1/account/keys/${first.id}`, { key: second.api_key })).status).toBe(200);
    const refused = await s.request("GET", "/api/v1/me", { key: a.key });
    expect(refused.status).toBe(401);
    expect(refused.body.message ?? refused.body.error?.message).toContain("Invalid API key");
    // a key may revoke itself; then nothing works with it
    expect((await s.request("DELETE", `/api/v1/account/keys/${second.id}`, { key: second.api_key })).status).toBe(200);
    expect((await s.request("GET", "/api/v1/me", { key: second.api_key })).status).toBe(401);
  });

  test("a read-only key reads and gets 403 naming the scope on every write, which changes nothing", async () => {
    const a = await newAccount();
    const w = await a.waitlist();
    const created = await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "dashboards", scopes: ["read"] } });
    expect(created.status).toBe(201);
    expect(created.body.data.api_key.scopes).toEqual(["read"]);
    const ro = created.body.data.api_key.api_key as string;
    expect((await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key: ro })).status).toBe(200);
    expect((await s.request("GET", "/api/v1/account/keys", { key: ro })).status).toBe(200);
    for (const [method, path, body] of [
      ["PATCH", `/api/v1/waitlist/${w.key}/settings`, { name: "Renamed" }],
      ["POST", `/api/v1/waitlist/${w.key}/sign-up`, { email: `ro${uniq()}@example.com` }],
      ["POST", "/api/v1/account/keys", { name: "escalate" }],
      ["POST", "/api/v1/waitlists", { name: `RO ${uniq()}` }],
    ] as const) {
      const r = await s.request(method, path, { key: ro, body });
      expect(r.status).toBe(403);
      expect(JSON.stringify(r.body)).toContain("scope write");
    }
    expect((await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key: a.key })).body.data.settings.name).not.toBe("Renamed");
    expect((await s.request("GET", `/api/v1/waitlist/${w.key}/subscribers`, { key: a.key })).body.data.total).toBe(0);
    expect((await s.request("GET", "/api/v1/account/keys", { key: a.key })).body.data.keys).toHaveLength(2);
  });

  test("a key limited to named waitlists works on those, lists those, and is 403 elsewhere", async () => {
    const a = await newAccount();
    const [w1, w2] = [await a.waitlist(), await a.waitlist()];
    const limited = (await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "one list", waitlists: [w1.key] } })).body.data.api_key;
    expect(limited.waitlists).toEqual([w1.key]);
    expect((await s.request("POST", `/api/v1/waitlist/${w1.key}/sign-up`, { key: limited.api_key, body: { email: `l${uniq()}@example.com` } })).status).toBe(200);
    const other = await s.request("GET", `/api/v1/waitlist/${w2.key}/settings`, { key: limited.api_key });
    expect(other.status).toBe(403);
    expect(JSON.stringify(other.body)).toContain("limited to other waitlists");
    const listed = await s.request("GET", "/api/v1/waitlists", { key: limited.api_key });
    expect(listed.body.data.waitlists.map((w: any) => w.key)).toEqual([w1.key]);
    expect((await s.request("GET", "/api/v1/me", { key: limited.api_key })).status).toBe(200);
    for (const [method, path] of [
      ["GET", "/api/v1/account/keys"],
      ["GET", "/api/v1/account/audit"],
      ["POST", "/api/v1/waitlists"],
    ] as const) {
      expect((await s.request(method, path, { key: limited.api_key, body: method === "POST" ? { name: `L ${uniq()}` } : undefined })).status).toBe(403);
    }
  });

  test("bad key settings are a 400 naming the field, and no key is made", async () => {
    const a = await newAccount();
    const cases: [unknown, string][] = [
      [{ name: "x", scopes: ["admin"] }, "scopes"],
      [{ name: "x", scopes: ["write"] }, "scopes"],
      [{ name: "x", waitlists: ["no-such-waitlist"] }, "waitlists"],
      [{ name: "x", waitlists: [] }, "waitlists"],
      [{ name: "x", scopes: "read" }, "scopes"],
    ];
    for (const [body, field] of cases) {
      const r = await s.request("POST", "/api/v1/account/keys", { key: a.key, body });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    expect((await s.request("GET", "/api/v1/account/keys", { key: a.key })).body.data.keys).toHaveLength(1);
  });
});

describe("the audit log (issue 48 item 5)", () => {
  test("every route that may change something has an action, or is a visitor's own event", async () => {
    const doc = (await s.request("GET", "/swagger/json")).body;
    const changing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!path.startsWith("/api/")) continue;
      for (const method of Object.keys(ops)) {
        if (["post", "put", "patch", "delete"].includes(method)) changing.push(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`);
      }
    }
    expect(changing.length).toBeGreaterThan(25);
    expect(changing.filter((r) => !(r in ACTIONS) && !UNAUDITED.has(r))).toEqual([]);
    expect(Object.keys(ACTIONS).filter((r) => !changing.includes(r))).toEqual([]);
  });

  test("each change appears once with its actor, action, target, IP and user agent; reads, refusals and sign-ups add none", async () => {
    const a = await newAccount();
    const started = Date.now();
    const w = await a.waitlist();
    const second = (await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "ops" } })).body.data.api_key;
    const email = `Audit.Person${uniq()}@Example.com`;
    // a visitor's sign-up (sent with a key) is not a team member's change
    expect((await s.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key: a.key, body: { email } })).status).toBe(200);
    const headers = { "user-agent": "audit-test/1.0" };
    expect((await s.request("PUT", `/api/v1/waitlist/${w.key}/subscribers/${encodeURIComponent(email)}`, { key: second.api_key, body: { name: "Renamed" }, headers })).status).toBe(200);
    expect((await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key: second.api_key, body: { description: "Audited" } })).status).toBe(200);
    // refused before or by the change: nothing recorded
    expect((await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key: second.api_key, body: { position_offset: -5 } })).status).toBe(400);
    expect((await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: (await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key: a.key })).body.data.settings.name } })).status).toBe(409);
    expect((await s.request("DELETE", `/api/v1/waitlist/${w.key}/subscribers/nobody@example.com`, { key: a.key })).status).toBe(404);
    // reads
    await s.request("GET", `/api/v1/waitlist/${w.key}/subscribers`, { key: a.key });
    expect((await s.request("DELETE", `/api/v1/waitlist/${w.key}/subscribers/${encodeURIComponent(email)}`, { key: a.key })).status).toBe(200);
    expect((await s.request("DELETE", `/api/v1/account/keys/${second.id}`, { key: a.key })).status).toBe(200);

    const { entries, next_cursor } = await audit(a.key);
    expect(next_cursor).toBeNull();
    const firstKeyId = (await s.request("GET", "/api/v1/account/keys", { key: a.key })).body.data.keys[0].id;
    expect(entries.map((e) => [e.action, e.actor.id])).toEqual([
      ["key.revoke", firstKeyId],
      ["subscriber.delete", firstKeyId],
      ["settings.update", second.id],
      ["subscriber.update", second.id],
      ["key.create", firstKeyId],
      ["waitlist.create", firstKeyId],
    ]);
    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(["action", "actor", "at", "id", "ip", "target", "user_agent"]);
      expect(e.actor.type).toBe("key");
      expect(e.at).toBeGreaterThanOrEqual(started - 1000);
      expect(e.ip).toBe("127.0.0.1");
    }
    expect(entries[0].target).toBe(`account/keys/${second.id}`);
    expect(entries[2]).toMatchObject({ target: `waitlist/${w.key}/settings`, actor: { name: "ops" } });
    expect(entries[3].user_agent).toBe("audit-test/1.0");
    expect(entries[3].target).toMatch(new RegExp(`^waitlist/${w.key}/subscribers/a\\*\\*\\*@example\\.com$`, "i"));
    expect(entries[4].target).toBe(`account/keys/${second.id}`);
    expect(entries[5].target).toBe(`waitlist/${w.key}`);
    // never a secret or a full email
    const text = JSON.stringify(entries);
    for (const secret of [a.key, second.api_key, email, email.toLowerCase()]) expect(text).not.toContain(secret);
  });

  test("filters by actor, action (or its family) and since, and pages with next_cursor", async () => {
    const a = await newAccount();
    const w = await a.waitlist();
    const other = (await s.request("POST", "/api/v1/account/keys", { key: a.key, body: { name: "other" } })).body.data.api_key;
    for (let i = 0; i < 5; i++) {
      expect((await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key: i % 2 ? other.api_key : a.key, body: { description: `d${i}` } })).status).toBe(200);
    }
    const all = await audit(a.key);
    expect(all.entries).toHaveLength(7);
    expect((await audit(a.key, `?actor=${other.id}`)).entries.map((e) => e.action)).toEqual(["settings.update", "settings.update"]);
    expect((await audit(a.key, "?action=settings.update")).entries).toHaveLength(5);
    expect((await audit(a.key, "?action=key")).entries.map((e) => e.action)).toEqual(["key.create"]);
    expect((await audit(a.key, "?action=sett")).entries).toHaveLength(0);
    const since = all.entries[1].at;
    expect((await audit(a.key, `?since=${since}`)).entries.every((e) => e.at >= since)).toBe(true);
    expect((await audit(a.key, `?since=${new Date(since).toISOString()}`)).entries.length).toBe((await audit(a.key, `?since=${since}`)).entries.length);
    // three pages of 3, 3 and 1: every entry once, in the same order
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: any[]; next_cursor: string | null } = await audit(a.key, `?limit=3${cursor ? `&before=${cursor}` : ""}`);
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.entries.map((e) => e.id));
    // another account's log is its own
    expect((await audit(key)).entries.some((e) => seen.includes(e.id))).toBe(false);
    for (const [query, field] of [
      ["?since=yesterday", "since"],
      ["?before=aud_nope", "before"],
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?colour=red", "colour"],
    ]) {
      const r = await s.request("GET", `/api/v1/account/audit${query}`, { key: a.key });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
  });

  test("work a request leaves running records nothing of its own: an import is one entry", async () => {
    const a = await newAccount();
    const w = await a.waitlist();
    const csv = ["email,name", ...Array.from({ length: 50 }, (_, i) => `imp${i}-${uniq()}@example.com,Person ${i}`)].join("\n");
    const r = await s.request("POST", `/api/v1/waitlist/${w.key}/subscribers/import`, { key: a.key, raw: csv, headers: { "content-type": "text/csv" } });
    expect(r.status).toBe(202);
    const id = r.body.data.import.id;
    const deadline = Date.now() + 20_000;
    while ((await s.request("GET", `/api/v1/waitlist/${w.key}/imports/${id}`, { key: a.key })).body.data.import.status !== "done") {
      if (Date.now() > deadline) throw new Error("the import did not finish in 20 s");
      await Bun.sleep(50);
    }
    expect((await audit(a.key)).entries.map((e) => e.action)).toEqual(["subscriber.import", "waitlist.create"]);
  });
});
