// Custom questions (issue 46 item 1): the setting form_fields, answers checked on every path (API `answers`, the form
// action's fields named by the questions' keys) before anything is stored, shown by the hosted page, on the
// Subscriber object and its webhooks, filterable in the list (?answers.KEY=VALUE) and one CSV column per question.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseCsv } from "./support/csv";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, type Receiver } from "./support/peers";

let s: TestServer;
let hooks: Receiver;
beforeAll(async () => {
  hooks = startReceiver();
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const own = () => s.url.replace("127.0.0.1", "localhost");

const QUESTIONS = [
  { key: "role", label: "Your role & team", type: "select", required: true, options: ["founder", "engineer", "other"] },
  { key: "interests", label: "Interests", type: "multiselect", options: ["api", "widget", "email"] },
  { key: "agree", label: "I'd like product news", type: "checkbox" },
  { key: "team_size", label: "Team size", type: "number" },
  { key: "site", label: "Website", type: "url" },
  { key: "why", label: "Why <now>?", type: "textarea", max_length: 20 },
];

async function waitlist() {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Questions ${uniq()}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  return { key, w, path };
}

describe("the form_fields setting", () => {
  test("is stored with its defaults; a reserved or repeated key, options where they do not belong and the like are 400 naming the field, and change nothing", async () => {
    const { key, path } = await waitlist();
    const bad: [unknown, RegExp][] = [
      [[{ key: "email", label: "E", type: "text" }], /form_fields\[0\]\.key.*reserved/],
      [[{ key: "a", label: "A", type: "text" }, { key: "a", label: "B", type: "text" }], /form_fields\[1\]\.key.*twice/],
      [[{ key: "pick", label: "Pick", type: "select" }], /form_fields\.0\.options is required/],
      [[{ key: "t", label: "T", type: "text", options: ["x"] }], /options/],
      [[{ key: "p", label: "P", type: "select", options: ["a", "a"] }], /form_fields\.0\.options/],
      [[{ key: "c", label: "C", type: "checkbox", max_length: 5 }], /max_length/],
      [[{ key: "Bad-Key", label: "B", type: "text" }], /form_fields\.0\.key|form_fields\[0\]\.key/],
      [[{ key: "x", label: "X", type: "date" }], /form_fields\.0\.type|form_fields\[0\]\.type/],
      [[{ key: "l", label: " ", type: "text" }], /form_fields\.0\.label|form_fields\[0\]\.label/],
    ];
    for (const [form_fields, message] of bad) {
      const r = await s.request("PATCH", `${path}/settings`, { key, body: { form_fields } });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    const settings = async () => (await s.request("GET", `${path}/settings`, { key })).body.data.settings;
    expect((await settings()).form_fields).toEqual([]);
    const ok = await s.request("PATCH", `${path}/settings`, { key, body: { form_fields: QUESTIONS } });
    expect([ok.status, ok.body.message]).toEqual([200, undefined]);
    expect(ok.body.data.settings.form_fields[0]).toEqual({ key: "role", label: "Your role & team", type: "select", required: true, options: ["founder", "engineer", "other"], max_length: null });
    expect(ok.body.data.settings.form_fields[2]).toEqual({ key: "agree", label: "I'd like product news", type: "checkbox", required: false, options: [], max_length: null });
    expect((await settings()).form_fields.map((f: { key: string }) => f.key)).toEqual(QUESTIONS.map((q) => q.key));
  });
});

describe("answers", () => {
  test("API sign-up: each bad answer is a 400 naming answers.KEY and stores nothing; good ones are on the Subscriber and its webhook", async () => {
    const { key, path } = await waitlist();
    await s.request("PATCH", `${path}/settings`, { key, body: { form_fields: QUESTIONS, webhook: { url: hooks.url, enabled: true } } });
    const email = `api-${uniq()}@example.com`;
    const bad: [unknown, RegExp][] = [
      [{}, /^answers\.role is required$/],
      [{ role: "ceo" }, /^answers\.role must be one of: founder, engineer, other$/],
      [{ role: "founder", nope: "x" }, /^answers\.nope is not a question of this waitlist/],
      [{ role: "founder", interests: ["api", "cli"] }, /^answers\.interests: "cli" is not one of/],
      [{ role: "founder", team_size: "ten" }, /^answers\.team_size must be a number$/],
      [{ role: "founder", site: "javascript:alert(1)" }, /^answers\.site must be an absolute http\(s\) URL$/],
      [{ role: "founder", why: "x".repeat(21) }, /^answers\.why must be at most 20 characters$/],
      [{ role: "founder", agree: "yes" }, /^answers\.agree must be true or false$/],
    ];
    for (const [answers, message] of bad) {
      const r = await s.request("POST", `${path}/sign-up`, { key, body: { email, answers } });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).status).toBe(404);
    const answers = { role: "founder", interests: ["widget", "api"], agree: true, team_size: 3, site: "https://rocket.example", why: "  speed  " };
    expect((await s.request("POST", `${path}/sign-up`, { key, body: { email, answers } })).status).toBe(200);
    const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(sub.answers).toEqual({ role: "founder", interests: ["widget", "api"], agree: true, team_size: 3, site: "https://rocket.example", why: "speed" });
    const created = await until(() => hooks.deliveries.find((d) => d.body?.type === "subscriber.created" && d.body.data.subscriber.email === email), 5_000, "subscriber.created");
    expect(created.body.data.subscriber.answers).toEqual(sub.answers);
  });

  test("form post: fields named by the questions are the answers (a checkbox 'on', a repeated multiselect, a number as text); a missing required one is 400", async () => {
    const { key, w, path } = await waitlist();
    await s.request("PATCH", `${path}/settings`, { key, body: { form_fields: QUESTIONS } });
    const post = (body: URLSearchParams) =>
      fetch(`${s.url}/s/${w.key}`, { method: "POST", body: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded", origin: own(), accept: "application/json" } });
    const email = `form-${uniq()}@example.com`;
    const missing = await post(new URLSearchParams({ email }));
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toBe("answers.role is required");
    const body = new URLSearchParams([["email", email], ["role", "engineer"], ["interests", "api"], ["interests", "email"], ["agree", "on"], ["team_size", "12"], ["plan", "pro"]]);
    expect((await post(body)).status).toBe(200);
    const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(sub.answers).toEqual({ role: "engineer", interests: ["api", "email"], agree: true, team_size: 12 });
    // a field that is no question stays metadata, as before
    expect(sub.metadata).toEqual({ plan: "pro" });
    const unchecked = `form2-${uniq()}@example.com`;
    expect((await post(new URLSearchParams({ email: unchecked, role: "other" }))).status).toBe(200);
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(unchecked)}`, { key })).body.data.subscriber.answers).toEqual({ role: "other", agree: false });
  });

  test("the hosted page shows every question with its label escaped; the list filters by answers.KEY; the CSV has a column per question", async () => {
    const { key, w, path } = await waitlist();
    await s.request("PATCH", `${path}/settings`, { key, body: { form_fields: QUESTIONS } });
    const html = await (await fetch(`${s.url}/p/${w.slug}`)).text();
    expect(html).toContain('<label>Your role &amp; team<select name="role" required><option value="">Choose…</option><option>founder</option>');
    expect(html).toContain('<input type="checkbox" name="interests" value="widget">');
    expect(html).toContain('<label class="choice"><input type="checkbox" name="agree" value="on">I&#39;d like product news</label>');
    expect(html).toContain('<textarea name="why" rows="3" maxlength="20"></textarea>');
    expect(html).toContain("Why &lt;now&gt;?");
    expect(html).not.toContain("<now>");

    const people = [
      { email: `a-${uniq()}@example.com`, answers: { role: "founder", interests: ["api"], agree: true, team_size: 3 } },
      { email: `b-${uniq()}@example.com`, answers: { role: "engineer", interests: ["api", "email"], agree: false, team_size: 30 } },
      { email: `c-${uniq()}@example.com`, answers: { role: "founder", team_size: 300 } },
    ];
    for (const p of people) expect((await s.request("POST", `${path}/sign-up`, { key, body: p })).status).toBe(200);
    const list = async (query: string) => {
      const r = await s.request("GET", `${path}/subscribers?${query}`, { key });
      expect(r.status).toBe(200);
      return r.body.data.subscribers.map((x: { email: string }) => x.email).sort();
    };
    expect(await list("answers.role=founder")).toEqual([people[0].email, people[2].email].sort());
    expect(await list("answers.interests=api")).toEqual([people[0].email, people[1].email].sort());
    expect(await list("answers.interests=email&answers.role=engineer")).toEqual([people[1].email]);
    expect(await list("answers.agree=true")).toEqual([people[0].email]);
    expect(await list("answers.team_size=3")).toEqual([people[0].email]);
    expect(await list("answers.team_size=30.0")).toEqual([people[1].email]);
    for (const [query, message] of [
      ["answers.nope=x", /answers\.nope.*not a question/],
      ["answers.agree=maybe", /answers\.agree must be true or false/],
      ["answers.team_size=lots", /answers\.team_size must be a number/],
      ["colour=red", /Unknown query parameter "colour"/],
    ] as const) {
      const r = await s.request("GET", `${path}/subscribers?${query}`, { key });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(message);
    }

    const csv = parseCsv(await (await fetch(`${s.url}${path}/subscribers/export`, { headers: { "x-api-key": key } })).text());
    const header = csv[0];
    expect(header.slice(-QUESTIONS.length)).toEqual(QUESTIONS.map((q) => `answers.${q.key}`));
    const row = csv.find((r) => r[header.indexOf("email")] === people[1].email)!;
    expect(row[header.indexOf("answers.interests")]).toBe("api; email");
    expect(row[header.indexOf("answers.agree")]).toBe("false");
    expect(row[header.indexOf("answers.team_size")]).toBe("30");
  });
});
