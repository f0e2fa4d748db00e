// Hosted pages (DESIGN §4): the thank-you page /t/{token} and the confirm-pending page, over HTTP and in Chromium.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { startServer, type TestServer } from "./support/server";
import { browserTest, isolatedPage, launchBrowser } from "./support/browser";
import { PAGE_CSP } from "../src/pages/layout";

const ARTIFACTS = join(import.meta.dir, "artifacts");
let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startServer({ env: { RATE_LIMITS: "off" } }), launchBrowser()]);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

async function signedUp(name: string, offset = 0) {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Pages ${uniq()} <i>`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (offset) await s.request("PATCH", `${path}/settings`, { key, body: { position_offset: offset } });
  await s.request("POST", `${path}/sign-up`, { key, body: { email: `lead-${uniq()}@example.com` } });
  const r = await s.request("POST", `${path}/sign-up`, { key, body: { email: `me-${uniq()}@example.com`, name } });
  return { key, w, path, signUp: r.body };
}

describe("thank-you page", () => {
  test("shows the inflated position and the referral link, escapes every text, and sends the CSP", async () => {
    const { w, signUp } = await signedUp(`<script>alert(1)</script>`, 500);
    const res = await fetch(`${s.url}/t/${signUp.sign_up_token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    expect(html).toContain('data-position="2"');
    expect(html).toContain('data-inflated-position="502"');
    expect(html).toContain("#502");
    const link = `${s.url.replace("127.0.0.1", "localhost")}/p/${w.slug}?ref=${signUp.referral_code}`;
    expect(html).toContain(`value="${link}"`);
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<i>");
    expect(html).toContain(`https://twitter.com/intent/tweet?text=`);
    expect(html).not.toMatch(/<(img|link|script)[^>]+(src|href)="https?:/);
  });

  test("an unknown token is a friendly 404 page", async () => {
    const res = await fetch(`${s.url}/t/nope${uniq()}`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("not valid");
  });

  browserTest("in Chromium at phone and desktop widths: no third-party request, no CSP violation, the copy button copies the link", async () => {
    const { signUp } = await signedUp("Grace");
    for (const [label, viewport] of [["phone", { width: 390, height: 844 }], ["desktop", { width: 1280, height: 800 }]] as const) {
      for (const scheme of ["light", "dark"] as const) {
        const { page, offsite } = await isolatedPage(browser, s.url);
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: s.url });
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme: scheme });
        const problems: string[] = [];
        page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
        page.on("pageerror", (e) => problems.push(e.message));
        await page.goto(`${s.url}/t/${signUp.sign_up_token}`);
        expect(await page.locator("#position").textContent()).toBe(`#${signUp.inflated_position}`);
        await page.getByRole("button", { name: "Copy" }).click();
        await page.getByRole("button", { name: "Copied!" }).waitFor({ timeout: 5_000 });
        // (browser-side code: the DOM globals exist in the page, not in this file's types)
        expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(await page.locator("#referral-link").inputValue());
        // the card fits the viewport: nothing scrolls sideways on a phone
        expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth)).toBe(true);
        await page.screenshot({ path: join(ARTIFACTS, `thank-you-${label}-${scheme}.png`), fullPage: true });
        expect(problems).toEqual([]);
        expect(offsite).toEqual([]);
        await page.context().close();
      }
    }
  });
});

describe("favicon (issue 43)", () => {
  test("pages, Swagger UI and the dashboard name an icon the binary serves, and /favicon.ico is that icon, not a 404", async () => {
    for (const path of ["/pending/nope", "/swagger", "/dashboard"]) {
      const html = await (await fetch(`${s.url}${path}`)).text();
      expect(html, path).toContain('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">');
    }
    for (const path of ["/assets/favicon.svg", "/favicon.ico"]) {
      const r = await fetch(`${s.url}${path}`);
      expect([r.status, r.headers.get("content-type")], path).toEqual([200, "image/svg+xml"]);
      expect(await r.text(), path).toStartWith("<svg xmlns=");
    }
  });
});

describe("confirm-pending page", () => {
  test("names the waitlist, escaped; an unknown waitlist key is a 404 page", async () => {
    const { w } = await signedUp("x");
    const res = await fetch(`${s.url}/pending/${w.key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    const html = await res.text();
    expect(html).toContain("Check your inbox");
    expect(html).toContain(w.name.replace("<", "&lt;").replace(">", "&gt;"));
    expect((await fetch(`${s.url}/pending/unknown${uniq()}`)).status).toBe(404);
  });
});

describe("on-demand TLS check for custom domains (deploy/Caddyfile)", () => {
  test("answers 200 for a waitlist's custom domain and 404 for any other host", async () => {
    const { key, w } = await signedUp("x");
    const domain = `join-${uniq()}.example.org`;
    await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { custom_domain: domain } });
    expect((await fetch(`${s.url}/internal/custom-domain?domain=${domain}`)).status).toBe(200);
    expect((await fetch(`${s.url}/internal/custom-domain?domain=other-${uniq()}.example.org`)).status).toBe(404);
    expect((await fetch(`${s.url}/internal/custom-domain`)).status).toBe(404);
  });
});

describe("any query string (issue 44)", () => {
  test("hosted, status and link pages ignore the parameters they do not use: utm_*, fbclid, gclid, a repeated ref; never a 400", async () => {
    const { key, w, path, signUp } = await signedUp("Ads");
    const domain = `ads-${uniq()}.example.test`;
    expect((await s.request("POST", `${path}/landing-page`, { key, body: { headline: "Launching soon" } })).status).toBe(201);
    expect((await s.request("POST", `${path}/landing-page/publish`, { key, body: {} })).status).toBe(200);
    expect((await s.request("PATCH", `${path}/settings`, { key, body: { custom_domain: domain } })).status).toBe(200);
    const ads = `utm_source=newsletter&utm_medium=email&utm_campaign=launch&utm_term=x&utm_content=y&fbclid=IwAR0abc&gclid=Cj0KCQ&mc_eid=1&anything=%00%ff`;
    const get = (url: string, headers: Record<string, string> = {}) => fetch(s.url + url, { headers, redirect: "manual" });

    const hosted = await get(`/p/${w.slug}?${ads}&ref=${signUp.referral_code}&ref=other`);
    expect(hosted.status).toBe(200);
    // the first ref is the one the form carries
    expect(await hosted.text()).toContain(`value="${signUp.referral_code}"`);
    expect((await get(`/?${ads}`, { host: domain })).status).toBe(200);
    expect((await get(`/t/${signUp.sign_up_token}?${ads}`)).status).toBe(200);
    expect((await get(`/t/${signUp.sign_up_token}/leave?${ads}`)).status).toBe(200);
    expect((await get(`/?${ads}`)).status).toBe(200);
  });
});
