// The public form action POST /s/{waitlistKey} (DESIGN §4): formats, origin checks, honeypot, per-IP limit,
// browser redirects and JSON answers, and fraud signals always on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
let limited: TestServer;
beforeAll(async () => {
  [s, limited] = await Promise.all([startServer({ env: { RATE_LIMITS: "off", TRUST_PROXY: "true" } }), startServer()]);
});
afterAll(() => Promise.all([s.stop(), limited.stop()]));

const uniq = () => Math.random().toString(36).slice(2, 8);
const own = (server: TestServer) => server.url.replace("127.0.0.1", "localhost");

async function waitlist(server = s, settings: Record<string, unknown> = {}) {
  const { key } = await server.account();
  const w = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Form ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (Object.keys(settings).length) expect((await server.request("PATCH", `${path}/settings`, { key, body: settings })).status).toBe(200);
  return { key, w, path };
}

function post(server: TestServer, waitlistKey: string, body: string | FormData, headers: Record<string, string>) {
  return fetch(`${server.url}/s/${waitlistKey}`, { method: "POST", body, headers, redirect: "manual" });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const urlencoded = { "content-type": "application/x-www-form-urlencoded" };

describe("accepted posts", () => {
  test("a browser post from the service's own host is 303 to the thank-you page; the subscriber joined with form", async () => {
    const { key, w, path } = await waitlist();
    const email = `browser-${uniq()}@example.com`;
    const r = await post(s, w.key, form({ email, name: "Bea", utm_source: "newsletter", website: "" }), { ...urlencoded, origin: own(s), accept: "text/html" });
    expect(r.status).toBe(303);
    const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(r.headers.get("location")).toBe(sub.thank_you_url);
    expect(sub.joined_with).toBe("form");
    expect(sub.name).toBe("Bea");
    expect(sub.metadata).toEqual({ utm_source: "newsletter" });
    expect(r.headers.get("x-ratelimit-limit")).toBe("10");
  });

  test("multipart form data is accepted too", async () => {
    const { key, w, path } = await waitlist();
    const data = new FormData();
    const email = `multi-${uniq()}@example.com`;
    data.set("email", email);
    data.set("phone", "+1 555 0100");
    const r = await post(s, w.key, data, { origin: own(s) });
    expect(r.status).toBe(303);
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber.phone).toBe("+1 555 0100");
  });

  test("a JSON client gets exactly the sign-up JSON", async () => {
    const { w } = await waitlist();
    const r = await post(s, w.key, JSON.stringify({ email: `json-${uniq()}@example.com` }), { "content-type": "application/json", accept: "application/json", origin: own(s) });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(Object.keys(body).sort()).toEqual(["inflated_position", "is_new_sign_up", "is_pending_confirmation", "message", "points", "position", "redirect_url", "referral_code", "sign_up_token", "success"]);
    expect(body).toMatchObject({ success: true, is_new_sign_up: true, is_pending_confirmation: false, position: 1, points: 50 });
  });

  test("with double opt-in the browser goes to the confirm-pending page", async () => {
    const { w } = await waitlist(s, { double_opt_in: true });
    const r = await post(s, w.key, form({ email: `doi-${uniq()}@example.com` }), { ...urlencoded, origin: own(s) });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`${own(s)}/pending/${w.key}`);
  });

  test("a filled honeypot looks like a success and stores nothing", async () => {
    const { key, w, path } = await waitlist();
    const r = await post(s, w.key, form({ email: `bot-${uniq()}@example.com`, website: "http://spam.example" }), { ...urlencoded, origin: own(s) });
    expect(r.status).toBe(303);
    const j = await post(s, w.key, JSON.stringify({ email: `bot2-${uniq()}@example.com`, website: "x" }), { "content-type": "application/json", accept: "application/json", origin: own(s) });
    expect(((await j.json()) as any).success).toBe(true);
    expect((await s.request("GET", `${path}/subscribers`, { key })).body.data.total).toBe(0);
  });
});

describe("who may post", () => {
  test("a foreign Origin, or neither Origin nor Referer, is 403: an HTML page for browsers, JSON for JSON clients", async () => {
    const { key, w, path } = await waitlist();
    const browser = await post(s, w.key, form({ email: `x-${uniq()}@example.com` }), { ...urlencoded, origin: "https://evil.example" });
    expect(browser.status).toBe(403);
    expect(browser.headers.get("content-type")).toContain("text/html");
    expect(await browser.text()).toContain("allowed_domains");
    const json = await post(s, w.key, JSON.stringify({ email: `y-${uniq()}@example.com` }), { "content-type": "application/json", accept: "application/json", origin: "https://evil.example" });
    expect(json.status).toBe(403);
    expect((await json.json()) as any).toEqual({ statusCode: 403, error: "Forbidden", message: expect.stringContaining("allowed_domains") });
    const bare = await post(s, w.key, form({ email: `z-${uniq()}@example.com` }), urlencoded);
    expect(bare.status).toBe(403);
    expect((await s.request("GET", `${path}/subscribers`, { key })).body.data.total).toBe(0);
  });

  test("allowed_domains (exact and *.wildcard), the custom domain, and the Referer when there is no Origin", async () => {
    const { key, w, path } = await waitlist(s, { allowed_domains: ["shop.example.com", "*.preview.example.dev"], custom_domain: "join.example.org" });
    const cases: [Record<string, string>, number][] = [
      [{ origin: "https://shop.example.com" }, 303],
      [{ origin: "https://pr-12.preview.example.dev" }, 303],
      [{ origin: "https://join.example.org" }, 303],
      [{ referer: "https://shop.example.com/landing?x=1" }, 303],
      [{ origin: "https://example.com" }, 403],
      [{ origin: "https://notshop.example.com.evil.io" }, 403],
      [{ origin: "null" }, 403],
    ];
    for (const [headers, status] of cases) {
      const r = await post(s, w.key, form({ email: `d-${uniq()}@example.com` }), { ...urlencoded, ...headers });
      expect(r.status, JSON.stringify(headers)).toBe(status);
    }
    expect((await s.request("GET", `${path}/subscribers`, { key })).body.data.total).toBe(4);
  });

  test("a CORS preflight from an allowed origin is answered; a foreign one is refused", async () => {
    const { w } = await waitlist(s, { allowed_domains: ["app.example.com"] });
    const ok = await fetch(`${s.url}/s/${w.key}`, { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "POST" } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(ok.headers.get("access-control-allow-methods")).toBe("POST");
    const no = await fetch(`${s.url}/s/${w.key}`, { method: "OPTIONS", headers: { origin: "https://evil.example" } });
    expect(no.status).toBe(403);
  });

  test("an unknown waitlist key is 404", async () => {
    const r = await post(s, `nope${uniq()}`, JSON.stringify({ email: "a@example.com" }), { "content-type": "application/json", accept: "application/json", origin: own(s) });
    expect(r.status).toBe(404);
  });
});

describe("errors and limits", () => {
  test("an invalid email is 400: a readable page for browsers, {statusCode, message} for JSON clients", async () => {
    const { w } = await waitlist();
    const page = await post(s, w.key, form({ email: "not-an-email" }), { ...urlencoded, origin: own(s), referer: `${own(s)}/p/x` });
    expect(page.status).toBe(400);
    const html = await page.text();
    expect(html).toContain("valid email");
    expect(html).toContain("Go back");
    const json = await post(s, w.key, JSON.stringify({ email: "" }), { "content-type": "application/json", accept: "application/json", origin: own(s) });
    expect(json.status).toBe(400);
    expect((await json.json()) as any).toEqual({ statusCode: 400, message: "email is required" });
  });

  test("the 11th post in a minute from one IP to one waitlist is 429 with retry_after; another waitlist is not affected", async () => {
    const a = await waitlist(limited);
    const b = await waitlist(limited);
    const statuses: number[] = [];
    let last!: Response;
    for (let i = 0; i < 11; i++) {
      last = await post(limited, a.w.key, JSON.stringify({ email: `burst${i}-${uniq()}@example.com` }), { "content-type": "application/json", accept: "application/json", origin: own(limited) });
      statuses.push(last.status);
    }
    // a minute boundary may reset the window once; the limit still holds within each window
    const refused = statuses.filter((st) => st === 429).length;
    expect(refused === 1 || (refused === 0 && statuses.every((st) => st === 200))).toBe(true);
    if (refused === 1) {
      expect(statuses[10]).toBe(429);
      const body = (await last.json()) as any;
      expect(body).toEqual({ statusCode: 429, message: expect.any(String), data: { retry_after: expect.any(Number) } });
      expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
      // issue 16: every 429 says when
      expect(last.headers.get("retry-after")).toBe(String(body.data.retry_after));
    }
    const other = await post(limited, b.w.key, JSON.stringify({ email: `other-${uniq()}@example.com` }), { "content-type": "application/json", accept: "application/json", origin: own(limited) });
    expect(other.status).toBe(200);
  });
});

describe("fraud signals are always on for forms", () => {
  test("a referral from a different IP is credited; from the referrer's own IP it is withheld", async () => {
    const { key, w, path } = await waitlist();
    const json = (ip: string) => ({ "content-type": "application/json", accept: "application/json", origin: own(s), "x-forwarded-for": ip });
    const referrer: any = await (await post(s, w.key, JSON.stringify({ email: `ref-${uniq()}@example.com` }), json("203.0.113.10"))).json();
    const friend = await post(s, w.key, JSON.stringify({ email: `friend-${uniq()}@example.com`, ref: referrer.referral_code }), json("198.51.100.20"));
    expect(friend.status).toBe(200);
    const self = await post(s, w.key, JSON.stringify({ email: `self-${uniq()}@example.com`, ref: referrer.referral_code }), json("203.0.113.10"));
    expect(((await self.json()) as any).is_new_sign_up).toBe(true);
    const list = (await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc`, { key })).body.data.subscribers;
    const top = list[0];
    expect(top.referral_code).toBe(referrer.referral_code);
    expect(top.referral_count).toBe(1);
    expect(top.points).toBe(80);
    expect(top.ip_address).toBe("203.0.113.10");
  });
});
