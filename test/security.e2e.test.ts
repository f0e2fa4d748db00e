// Security review (issue 10), each promise of the README's security section as a test over real HTTP:
// headers on every response, keys never shown again, hostile text escaped everywhere, no open redirect.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";

const BASE_URL = "http://wl.secure.example";
let s: TestServer;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  s = await startServer({ env: { BASE_URL, RATE_LIMITS: "off", SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const XSS = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`;

/** A published waitlist page with one confirmed subscriber and one pending (double opt-in) one. */
async function launch() {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Sec ${uniq()}`, landing_page: { headline: "Secure launch" } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
  const joined = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `a-${uniq()}@example.com` } })).body;
  const preview = (await s.request("POST", `${path}/landing-page/preview`, { key, body: {} })).body.data.preview_url as string;
  return { key, w, path, joined, preview: new URL(preview).pathname };
}

describe("headers", () => {
  test("every response, page, asset, document or JSON, has nosniff, a Referrer-Policy and a CSP that says who may frame it", async () => {
    const { key, w, joined, preview } = await launch();
    const paths: [string, string, Record<string, string>?][] = [
      ["GET", "/"],
      ["GET", "/dashboard"],
      ["GET", "/dashboard/assets/app.js"],
      ["GET", "/swagger"],
      ["GET", "/swagger/json"],
      ["GET", "/swagger/assets/start.js"],
      ["GET", `/p/${w.slug}`],
      ["GET", `/t/${joined.sign_up_token}`],
      ["GET", `/pending/${w.key}`],
      ["GET", "/confirm/not-a-token"],
      ["GET", preview],
      ["GET", "/assets/pages.css"],
      ["GET", "/healthz"],
      ["GET", "/api/v1/me", { "x-api-key": key }],
      ["GET", "/api/v1/me"],
      ["GET", "/no/such/page"],
      ["DELETE", "/healthz"],
      ["POST", `/s/${w.key}`, { "content-type": "application/x-www-form-urlencoded", origin: BASE_URL }],
    ];
    for (const [method, path, headers] of paths) {
      const r = await fetch(`${s.url}${path}`, { method, headers, redirect: "manual", body: method === "POST" ? "email=x%40example.com" : undefined });
      const what = `${method} ${path} (${r.status})`;
      expect(r.status, what).toBeLessThan(500);
      expect(r.headers.get("x-content-type-options"), what).toBe("nosniff");
      expect(r.headers.get("referrer-policy"), what).toMatch(/^(no-referrer|strict-origin-when-cross-origin)$/);
      const csp = r.headers.get("content-security-policy") ?? "";
      expect(csp, what).toContain("default-src 'none'");
      expect(csp, what).toContain(path === preview ? "frame-ancestors 'self'" : "frame-ancestors 'none'");
      expect(csp, what).not.toMatch(/https?:|\*/);
    }
  });
});

describe("keys", () => {
  test("an API key is shown once: never in a later response, never in a log line, not even as its hash", async () => {
    const created = await s.cli("account", "create", "--username", `keys_${uniq()}`, "--plan", "growth", "--json");
    const key: string = created.json.api_key;
    const hash = createHash("sha256").update(key).digest("hex");
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Keys ${uniq()}` } })).body.data.waitlist;
    const waitlistKey = (await s.request("POST", `/api/v1/waitlist/${w.key}/api-key`, { key })).body.data.api_key.api_key as string;
    const extra = (await s.request("POST", "/api/v1/account/keys", { key, body: { name: "ci" } })).body.data.api_key;
    const bodies: string[] = [];
    let lastId = "";
    for (const [method, path, k] of [
      ["GET", "/api/v1/me", key],
      ["GET", "/api/v1/waitlists", key],
      ["GET", `/api/v1/waitlist/${w.key}/settings`, key],
      ["GET", `/api/v1/waitlist/${w.key}/settings`, waitlistKey],
      ["GET", "/api/v1/me", waitlistKey],
      ["GET", "/api/v1/me", `${key}x`],
      ["DELETE", `/api/v1/account/keys/${extra.id}`, key],
      ["GET", "/api/v1/me", extra.api_key],
    ] as const) {
      const res = await s.request(method, path, { key: k });
      bodies.push(res.text);
      lastId = res.headers.get("x-request-id")!;
    }
    // the log lines of every request above are written by then
    await until(() => s.logs.some((l) => l.includes(`"req_id":"${lastId}"`)), 5_000, "the last request's log line");
    for (const secret of [key, waitlistKey, extra.api_key, hash]) {
      for (const body of bodies) expect(body).not.toContain(secret);
      expect(s.logs.join("\n")).not.toContain(secret);
    }
  });
});

describe("hostile text", () => {
  test("a name, metadata and a waitlist name full of markup are escaped on the thank-you and pending pages and in emails", async () => {
    const { key } = await s.account("growth");
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `${XSS} ${uniq()}` } })).body.data.waitlist;
    const path = `/api/v1/waitlist/${w.key}`;
    await s.request("PATCH", `${path}/settings`, { key, body: { welcome_email: { enabled: true, subject: "Hi {{name}}", body: "Hello {{name}} of {{waitlist_name}}" } } });
    const email = `xss-${uniq()}@example.com`;
    const joined = (await s.request("POST", `${path}/sign-up`, { key, body: { email, name: XSS, metadata: { note: XSS } } })).body;
    for (const page of [`/t/${joined.sign_up_token}`, `/pending/${w.key}`]) {
      const html = await (await fetch(`${s.url}${page}`)).text();
      expect(html, page).not.toContain("<script>alert");
      expect(html, page).not.toContain("<img src=x");
      expect(html, page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    }
    const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email)), 5_000, "welcome email");
    const html = String(mail.html);
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;");
  });

  test("markup in landing-page text is refused (400), so a hosted page never carries it", async () => {
    const { key, path } = await launch();
    for (const body of [{ headline: XSS }, { description: XSS }, { button_text: "<b>Go</b>" }, { seo: { title: XSS } }]) {
      const r = await s.request("PATCH", `${path}/landing-page`, { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("redirects", () => {
  test("no redirect goes where a request says: the form and the confirmation link only ever send people to BASE_URL", async () => {
    const { key, w, path } = await launch();
    const evil = "https://evil.example/phish";
    const form = await fetch(`${s.url}/s/${w.key}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE_URL, referer: evil },
      body: new URLSearchParams({ email: `r-${uniq()}@example.com`, redirect: evil, redirect_url: evil, next: evil, return_to: evil }),
    });
    expect(form.status).toBe(303);
    expect(form.headers.get("location")).toStartWith(`${BASE_URL}/t/`);
    await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true } });
    const email = `c-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email, metadata: { redirect: evil } } });
    const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email)), 5_000, "confirmation email");
    const link = String(mail.text).match(/\/confirm\/[A-Za-z0-9]+/)![0];
    const confirm = await fetch(`${s.url}${link}?next=${encodeURIComponent(evil)}`, { method: "POST", redirect: "manual" });
    expect(confirm.status).toBe(303);
    expect(confirm.headers.get("location")).toStartWith(`${BASE_URL}/t/`);
  });
});
