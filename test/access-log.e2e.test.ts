// The access log (DESIGN §8) records the status the client got, for every kind of route: JSON the framework
// serializes, errors, and routes that answer with their own Response (pages, the form, redirects). Issue 17.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(() => s?.stop());

/** The access-log line of the response (by its X-Request-Id). */
async function logged(res: globalThis.Response | { headers: Headers }) {
  const id = res.headers.get("x-request-id");
  expect(id).toBeTruthy();
  return until(() => s.logs.map((l) => JSON.parse(l)).find((e) => e.msg === "request" && e.req_id === id), 5_000, `the log line of ${id}`);
}

test("each kind of route is logged with the status it answered", async () => {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Logged launch", landing_page: { headline: "Logged" } } })).body.data.waitlist;
  expect((await s.request("POST", `/api/v1/waitlist/${w.key}/landing-page/publish`, { key })).status).toBe(200);
  const own = s.url.replace("127.0.0.1", "localhost");
  const formPost = (origin: string) =>
    fetch(`${s.url}/s/${w.key}`, { method: "POST", body: new URLSearchParams({ email: `form-${origin.length}@example.com` }), headers: { "content-type": "application/x-www-form-urlencoded", origin }, redirect: "manual" });

  const cases: [string, () => Promise<globalThis.Response | { status: number; headers: Headers }>, number][] = [
    ["JSON API 200", () => s.request("GET", "/api/v1/me", { key }), 200],
    ["JSON API 201", () => s.request("POST", "/api/v1/waitlists", { key, body: { name: "Second" } }), 201],
    ["JSON API 400", () => s.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "not an email" } }), 400],
    ["JSON API 401", () => s.request("GET", "/api/v1/me", { key: "wl_acct_nope" }), 401],
    ["JSON API 404", () => s.request("GET", `/api/v1/waitlist/${w.key}/subscribers/nobody%40example.com`, { key }), 404],
    ["unknown path 404", () => fetch(`${s.url}/no/such/thing`), 404],
    ["page 200", () => fetch(`${s.url}/p/${w.slug}`), 200],
    ["page 404", () => fetch(`${s.url}/p/no-such-slug`), 404],
    ["status page 404", () => fetch(`${s.url}/t/no-such-token`), 404],
    ["form 303", () => formPost(own), 303],
    ["form 403", () => formPost("https://elsewhere.example.org"), 403],
    ["form 404", () => fetch(`${s.url}/s/no-such-key`, { method: "POST", body: "email=a%40example.com", headers: { "content-type": "application/x-www-form-urlencoded", origin: own } }), 404],
  ];
  for (const [what, send, status] of cases) {
    const res = await send();
    expect([what, res.status]).toEqual([what, status]);
    expect([what, (await logged(res)).status]).toEqual([what, status]);
  }
});

test("the log line names the path and method, and keeps every line JSON", async () => {
  const res = await fetch(`${s.url}/p/missing-page`);
  const line = await logged(res);
  expect(line).toMatchObject({ level: "info", method: "GET", path: "/p/missing-page", status: 404 });
  expect(typeof line.ms).toBe("number");
  for (const l of s.logs) expect(() => JSON.parse(l)).not.toThrow();
});
