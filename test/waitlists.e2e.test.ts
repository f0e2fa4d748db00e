// spec: Waitlists (create, list) and DESIGN §4 slug rules, over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  // the create bucket allows 5 a minute; limits have their own tests
  s = await startServer({ env: { BASE_URL: "https://wl.example.com", RATE_LIMITS: "off" } });
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

describe("POST /api/v1/waitlists", () => {
  test("creates a waitlist: 201 with the spec's fields, slug derived from the name", async () => {
    const { key } = await s.account();
    const name = `  Rocket ${uniq()} -- Launch!! `;
    const r = await s.request("POST", "/api/v1/waitlists", { key, body: { name, category: "SaaS", description: "internal" } });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    const w = r.body.data.waitlist;
    expect(Object.keys(w).sort()).toEqual(["created_at", "form_action_url", "hosted_page_url", "id", "key", "name", "slug"]);
    expect(w.name).toBe(name.trim());
    expect(w.slug).toBe(name.trim().toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, ""));
    expect(w.hosted_page_url).toBeNull();
    expect(w.form_action_url).toBe(`https://wl.example.com/s/${w.key}`);
    expect(typeof w.created_at).toBe("number");
    expect(Math.abs(w.created_at - Date.now())).toBeLessThan(60_000);
    expect(typeof r.body.data.notes).toBe("string");
  });

  test("an explicit slug is kept as given; one not in slug form is 400 naming slug", async () => {
    const { key } = await s.account();
    const slug = `my-slug-${uniq()}`;
    const ok = await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Named ${uniq()}`, slug } });
    expect(ok.status).toBe(201);
    expect(ok.body.data.waitlist.slug).toBe(slug);
    for (const bad of ["Has Caps", "trailing-", "-lead", "double--dash", "spa ce", ""]) {
      const r = await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Other ${uniq()}`, slug: bad } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringContaining("slug") });
    }
  });

  test("taken names (any case) and slugs are 409, never renamed", async () => {
    const a = await s.account();
    const b = await s.account();
    const name = `Taken ${uniq()}`;
    expect((await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name } })).status).toBe(201);
    const sameName = await s.request("POST", "/api/v1/waitlists", { key: b.key, body: { name: name.toUpperCase(), slug: `other-${uniq()}` } });
    expect(sameName.status).toBe(409);
    expect(sameName.body.error).toBe("Conflict");
    expect(sameName.body.message).toContain("name");
    const sameSlug = await s.request("POST", "/api/v1/waitlists", { key: b.key, body: { name: `${name} two`, slug: name.toLowerCase().replace(/ /g, "-") } });
    expect(sameSlug.status).toBe(409);
    expect(sameSlug.body.message).toContain("slug");
    const list = await s.request("GET", "/api/v1/waitlists", { key: b.key });
    expect(list.body.data.total).toBe(0);
  });

  test("a name taken along with its slug answers the same 409 on both engines: the name's (issue 44)", async () => {
    const a = await s.account();
    const name = `Both Taken ${uniq()}`;
    expect((await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name } })).status).toBe(201);
    // the same name derives the same slug: two unique keys broken at once
    const again = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ statusCode: 409, error: "Conflict", message: `name "${name}" is already taken` });
    const other = (await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Other ${uniq()}` } })).body.data.waitlist;
    const renamed = await s.request("PATCH", `/api/v1/waitlist/${other.key}/settings`, { key: a.key, body: { name: name.toLowerCase() } });
    expect(renamed.status).toBe(409);
    expect(renamed.body.message).toBe(`name "${name.toLowerCase()}" is already taken`);
  });

  test("a name whose slug would be test-waitlist is reserved: 409", async () => {
    const { key } = await s.account();
    for (const body of [{ name: "Test Waitlist" }, { name: "test--waitlist!" }, { name: `x ${uniq()}`, slug: "test-waitlist" }]) {
      const r = await s.request("POST", "/api/v1/waitlists", { key, body });
      expect(r.status).toBe(409);
      expect(r.body.message).toContain("reserved");
    }
  });

  test("invalid names and fields are 400 naming the field, and create nothing", async () => {
    const { key } = await s.account();
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: 42 }, "name"],
      [{ name: "!!!" }, "slug"],
      [{ name: `ok ${uniq()}`, validate_emails: "yes" }, "validate_emails"],
      [{ name: `ok ${uniq()}`, referral_rewards: { signup_points: -1 } }, "referral_rewards.signup_points"],
      [{ name: `ok ${uniq()}`, referral_rewards: { bonus: 1 } }, "bonus"],
      [{ name: `ok ${uniq()}`, description: "d".repeat(1001) }, "description"],
      [{ name: `ok ${uniq()}`, colour: "red" }, "colour"],
    ];
    for (const [body, field] of cases) {
      const r = await s.request("POST", "/api/v1/waitlists", { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.statusCode).toBe(400);
      expect(r.body.error).toBe("Bad Request");
      expect(r.body.message).toContain(field);
      expect(r.text).not.toMatch(/typebox|elysia|stack|Expected union/i);
    }
    expect((await s.request("GET", "/api/v1/waitlists", { key })).body.data.total).toBe(0);
  });

  test("malformed JSON or a non-object body is 400", async () => {
    const { key } = await s.account();
    const bad = await s.request("POST", "/api/v1/waitlists", { key, raw: "{name:", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ statusCode: 400, error: "Bad Request", message: "Request body is not valid JSON" });
    const arr = await s.request("POST", "/api/v1/waitlists", { key, raw: "[1,2]", headers: { "content-type": "application/json" } });
    expect(arr.status).toBe(400);
    expect(arr.body.message).toBe("Request body must be a JSON object");
  });

  test("a JSON body sent as form-urlencoded (curl -d) is still read as JSON", async () => {
    const { key } = await s.account();
    const r = await s.request("POST", "/api/v1/waitlists", { key, raw: JSON.stringify({ name: `Curl ${uniq()}` }), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(r.status).toBe(201);
  });
});

describe("GET /api/v1/waitlists", () => {
  test("lists only the account's waitlists, newest first, with subscribers and views", async () => {
    const a = await s.account();
    const b = await s.account();
    const names = [`First ${uniq()}`, `Second ${uniq()}`, `Third ${uniq()}`];
    const created = [];
    for (const name of names) created.push((await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name } })).body.data.waitlist);
    await s.request("POST", "/api/v1/waitlists", { key: b.key, body: { name: `Theirs ${uniq()}` } });
    const r = await s.request("GET", "/api/v1/waitlists", { key: a.key });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data.total).toBe(3);
    expect(r.body.data.waitlists.map((w: any) => w.name)).toEqual([...names].reverse());
    const first = r.body.data.waitlists[2];
    expect(first).toEqual({ id: created[0].id, key: created[0].key, name: names[0], slug: created[0].slug, subscribers: 0, views: 0, created_at: created[0].created_at });
  });
});
