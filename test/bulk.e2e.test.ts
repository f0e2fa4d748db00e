// Moving in and out (issue 47 items 3 and 4), over HTTP: the bulk API (one transaction, per-item results in the
// request's order, skip and update modes, the single sign-up's validation per item), and the full export in CSV and
// JSON Lines with every field, filtered like the list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startServer, type TestServer } from "./support/server";
import { parseCsv } from "./support/csv";

let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
  ({ key } = await s.account("business"));
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

async function waitlist(settings: Record<string, unknown> = {}) {
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Bulk ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (Object.keys(settings).length) expect((await s.request("PATCH", `${path}/settings`, { key, body: settings })).status).toBe(200);
  return { w, path };
}

const bulk = (path: string, body: unknown) => s.request("POST", `${path}/subscribers/bulk`, { key, body });

describe("POST .../subscribers/bulk", () => {
  test("items go in in order, each reported in the request's order; an invalid item is reported and the rest go in", async () => {
    const { path } = await waitlist({ form_fields: [{ key: "role", label: "Role", type: "select", required: true, options: ["founder", "engineer"] }] });
    const r = await bulk(path, {
      subscribers: [
        { email: "Ada@Example.com", name: "Ada", answers: { role: "founder" }, metadata: { utm_source: "import" } },
        { email: "not-an-email" },
        { email: "bob@example.com", answers: { role: "astronaut" } },
        { email: "carol@example.com", answers: { role: "engineer" }, extra: 1 },
        { email: "dan@example.com", answers: { role: "engineer" } },
        { email: "ada@example.com", name: "Ada again", answers: { role: "founder" } },
        { email: "eve@mailinator.com", answers: { role: "founder" } },
      ],
    });
    expect(r.status).toBe(200);
    const results = r.body.data.results as any[];
    expect(results.map((x) => [x.index, x.status])).toEqual([
      [0, "created"],
      [1, "invalid"],
      [2, "invalid"],
      [3, "invalid"],
      [4, "created"],
      [5, "skipped"],
      [6, "invalid"],
    ]);
    expect(results[1].error).toContain("email");
    expect(results[2].error).toContain("answers.role");
    expect(results[3].error).toContain("extra");
    expect(results[6].error).toContain("disposable");
    for (const i of [1, 2, 3, 6]) expect(results[i].subscriber).toBeUndefined();
    expect(results[0].subscriber).toMatchObject({ email: "ada@example.com", name: "Ada", status: "waiting", position: 1, answers: { role: "founder" }, utm: { source: "import" } });
    expect(results[4].subscriber).toMatchObject({ email: "dan@example.com", position: 2 });
    // the repeat was skipped: Ada keeps her name
    expect(results[5].subscriber).toMatchObject({ email: "ada@example.com", name: "Ada" });
    const list = (await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc`, { key })).body.data;
    expect(list.subscribers.map((x: any) => x.email)).toEqual(["ada@example.com", "dan@example.com"]);
  });

  test("update mode updates an existing email's name, phone and metadata; skip mode changes nothing", async () => {
    const { path } = await waitlist();
    await s.request("POST", `${path}/sign-up`, { key, body: { email: "kim@example.com", name: "Kim", metadata: { plan: "free", team: "a" } } });
    const skipped = await bulk(path, { subscribers: [{ email: "kim@example.com", name: "Kimberly" }] });
    expect(skipped.body.data.results[0]).toMatchObject({ index: 0, status: "skipped", subscriber: { name: "Kim" } });
    const updated = await bulk(path, { mode: "update", subscribers: [{ email: "kim@example.com", name: "Kimberly", phone: "+1 555 0100", metadata: { plan: "pro", referred_by: "XYZ" } }, { email: "kim@example.com" }] });
    expect(updated.body.data.results.map((x: any) => x.status)).toEqual(["updated", "skipped"]);
    expect(updated.body.data.results[0].subscriber).toMatchObject({ name: "Kimberly", phone: "+1 555 0100", metadata: { plan: "pro", team: "a" } });
  });

  test("a referral code from an earlier item credits its referrer; the body is checked as a whole: 1 to 1,000 items, a known mode", async () => {
    const { path } = await waitlist();
    const first = await bulk(path, { subscribers: [{ email: "ref@example.com" }] });
    const code = first.body.data.results[0].subscriber.referral_code;
    const second = await bulk(path, { subscribers: [{ email: "friend@example.com", metadata: { referred_by: code } }] });
    expect(second.body.data.results[0].subscriber.referred_by).toBe(code);
    expect((await s.request("GET", `${path}/subscribers/ref%40example.com`, { key })).body.data.subscriber.referral_count).toBe(1);

    for (const [body, field] of [
      [{ subscribers: [] }, "subscribers"],
      [{ subscribers: Array.from({ length: 1001 }, (_, i) => ({ email: `x${i}@example.com` })) }, "subscribers"],
      [{ subscribers: [{ email: "a@example.com" }], mode: "merge" }, "mode"],
      [{}, "subscribers"],
    ] as const) {
      const r = await bulk(path, body);
      expect(r.status).toBe(400);
      expect(r.body.message).toContain(field);
    }
    expect((await s.request("GET", `${path}/subscribers`, { key })).body.data.total).toBe(2);
  });

  test("double opt-in: bulk sign-ups are pending and each gets its confirmation email queued once the request is committed", async () => {
    const { path } = await waitlist({ double_opt_in: true });
    const r = await bulk(path, { subscribers: [{ email: "p1@example.com" }, { email: "p2@example.com" }] });
    expect(r.body.data.results.map((x: any) => [x.status, x.subscriber.status])).toEqual([
      ["created", "pending"],
      ["created", "pending"],
    ]);
    const ids = r.body.data.results.map((x: any) => x.subscriber.id as string);
    const emails = await s.query<{ subscriber_id: string }>(sql`SELECT subscriber_id FROM outbox WHERE kind = 'email' AND topic = 'confirmation' AND subscriber_id IN (${ids[0]}, ${ids[1]})`);
    expect(emails.map((e) => e.subscriber_id).sort()).toEqual([...ids].sort());
  });
});

describe("GET .../subscribers/export?format=", () => {
  test("CSV and JSON Lines carry every field (answers, UTM, tags, status, email status, referrals), filtered like the list", async () => {
    const { path } = await waitlist({ form_fields: [{ key: "role", label: "Role", type: "text" }] });
    const a = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "a@example.com", name: "A", answers: { role: "cto" }, metadata: { utm_source: "news", utm_campaign: "spring", referrer_host: "news.example" } } })).body;
    await s.request("POST", `${path}/sign-up`, { key, body: { email: "b@example.com", metadata: { referred_by: a.referral_code } } });
    await s.request("POST", `${path}/tags`, { key, body: { name: "VIP" } });
    await s.request("POST", `${path}/subscribers/a%40example.com/tags`, { key, body: { tags: ["VIP"] } });

    const csv = await s.request("GET", `${path}/subscribers/export?format=csv`, { key });
    expect(csv.headers.get("content-type")).toStartWith("text/csv");
    const [header, ...rows] = parseCsv(csv.text);
    for (const column of ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "referrer_host", "answers.role", "tags", "email_status", "referral_count"]) expect(header).toContain(column);
    const rowA = Object.fromEntries(header.map((h, i) => [h, rows.find((r) => r[header.indexOf("email")] === "a@example.com")![i]]));
    expect(rowA).toMatchObject({ utm_source: "news", utm_campaign: "spring", referrer_host: "news.example", "answers.role": "cto", tags: "VIP", referral_count: "1", status: "waiting", email_status: "ok" });

    const jsonl = await s.request("GET", `${path}/subscribers/export?format=jsonl`, { key });
    expect(jsonl.headers.get("content-type")).toStartWith("application/x-ndjson");
    const lines = jsonl.text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.email)).toEqual(["a@example.com", "b@example.com"]);
    const listed = (await s.request("GET", `${path}/subscribers/a%40example.com`, { key })).body.data.subscriber;
    expect(lines[0]).toEqual(listed);

    // filtered like the list: the same parameters, the same subscribers (positions as they are in the whole line)
    const vip = (await s.request("GET", `${path}/subscribers/export?format=jsonl&tag=VIP`, { key })).text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(vip.map((l) => [l.email, l.position])).toEqual([["a@example.com", 1]]);
    const byAnswer = (await s.request("GET", `${path}/subscribers/export?format=csv&answers.role=cto&q=a%40`, { key })).text;
    expect(parseCsv(byAnswer).length).toBe(2);
    const second = (await s.request("GET", `${path}/subscribers/export?format=jsonl&q=b%40example`, { key })).text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(second.map((l) => [l.email, l.position])).toEqual([["b@example.com", 2]]);

    for (const [query, field] of [["format=xml", "format"], ["tag=Nope", "tag"], ["page=2", "page"]] as const) {
      const r = await s.request("GET", `${path}/subscribers/export?${query}`, { key });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain(field);
    }
  });
});
