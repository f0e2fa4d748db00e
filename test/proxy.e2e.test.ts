// Behind a reverse proxy (README: TRUST_PROXY, deploy/Caddyfile): the client's IP comes from X-Forwarded-For
// only when TRUST_PROXY is on, and every URL the service builds comes from BASE_URL, whatever the forwarded
// scheme or host says (issue 17 item 8: the README promised X-Forwarded-Proto, which nothing needs).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";

const BASE = "https://wl.example.test";
let proxied: TestServer;
let direct: TestServer;
beforeAll(async () => {
  [proxied, direct] = await Promise.all([
    startServer({ env: { RATE_LIMITS: "off", TRUST_PROXY: "true", BASE_URL: BASE } }),
    startServer({ env: { RATE_LIMITS: "off", BASE_URL: BASE } }),
  ]);
});
afterAll(() => Promise.all([proxied?.stop(), direct?.stop()]));

// a visitor in Great Britain, with a forwarded scheme and host that disagree with BASE_URL
const FORWARDED = { "x-forwarded-for": "81.2.69.160", "x-forwarded-proto": "http", "x-forwarded-host": "evil.example.org" };

async function formSignUp(server: TestServer, email: string) {
  const { key } = await server.account();
  const w = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: "Proxied" } })).body.data.waitlist;
  const res = await fetch(`${server.url}/s/${w.key}`, {
    method: "POST",
    body: new URLSearchParams({ email }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, ...FORWARDED },
    redirect: "manual",
  });
  const sub = (await server.request("GET", `/api/v1/waitlist/${w.key}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  return { res, sub };
}

test("with TRUST_PROXY the form's visitor is the X-Forwarded-For address; the redirect is on BASE_URL whatever X-Forwarded-Proto/-Host say", async () => {
  const { res, sub } = await formSignUp(proxied, "visitor@example.com");
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe(sub.thank_you_url);
  expect(sub.thank_you_url.startsWith(`${BASE}/t/`)).toBe(true);
  expect([sub.ip_address, sub.country]).toEqual(["81.2.69.160", "GB"]);
});

test("without TRUST_PROXY the forwarded headers are ignored: the visitor is the socket's address", async () => {
  const { res, sub } = await formSignUp(direct, "direct@example.com");
  expect(res.status).toBe(303);
  expect(sub.thank_you_url.startsWith(`${BASE}/t/`)).toBe(true);
  expect(sub.ip_address).toBe("127.0.0.1");
  expect(sub.country).toBeNull();
});

test("API answers build their URLs from BASE_URL too", async () => {
  const { key } = await proxied.account();
  const w = (await proxied.request("POST", "/api/v1/waitlists", { key, body: { name: "Proxied API" } })).body.data.waitlist;
  const r = await proxied.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "api@example.com" }, headers: FORWARDED });
  expect(r.status).toBe(200);
  expect(r.body.redirect_url.startsWith(`${BASE}/t/`)).toBe(true);
});
