// The whole visitor journey in real Chromium (DESIGN §4): a published page, its form, the thank-you page,
// a friend following the referral link, and the referrer moving up. Screenshots go to test/artifacts/.
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startServer, type TestServer } from "./support/server";
import { launchBrowser, test } from "./support/browser";

const ARTIFACTS = join(import.meta.dir, "artifacts");
let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  // behind a reverse proxy (TRUST_PROXY): each browser context brings its own X-Forwarded-For, like two visitors
  [s, browser] = await Promise.all([startServer({ env: { RATE_LIMITS: "off", TRUST_PROXY: "true" } }), launchBrowser()]);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** A visitor: its own context and IP; records console errors, CSP violations and off-site requests. */
async function visitor(ip: string): Promise<{ context: BrowserContext; page: Page; problems: string[]; offsite: string[] }> {
  const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": ip } });
  const page = await context.newPage();
  const problems: string[] = [];
  const offsite: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(e.message));
  await page.route("**/*", (route) => {
    const host = new URL(route.request().url()).hostname;
    if (host === "localhost" || host === "127.0.0.1") return route.continue();
    offsite.push(route.request().url());
    return route.abort();
  });
  return { context, page, problems, offsite };
}

test("a visitor signs up through the hosted page; a friend follows the referral link and the visitor moves up", async () => {
  const { key } = await s.account();
  const name = `Rocket ${Math.random().toString(36).slice(2, 8)}`;
  const created = await s.request("POST", "/api/v1/waitlists", {
    key,
    body: {
      name,
      referral_rewards: { enabled: true },
      landing_page: {
        headline: "Rockets for everyone",
        description: "Be first to fly. Early members get a free launch.",
        button_text: "Save my seat",
        collect_name: true,
        background: { type: "gradient", value: "linear-gradient(135deg, #1e3a8a 0%, #9333ea 100%)" },
        seo: { title: "Rockets - join the waitlist", og_description: "Fly first" },
      },
    },
  });
  expect(created.status).toBe(201);
  const w = created.body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
  // someone is already on the list, so the visitor starts at #2
  await s.request("POST", `${path}/sign-up`, { key, body: { email: "early@example.com" } });

  const base = s.url.replace("127.0.0.1", "localhost");
  const ada = await visitor("203.0.113.1");
  await ada.page.goto(`${base}/p/${w.slug}`);
  expect(await ada.page.title()).toBe("Rockets - join the waitlist");
  await ada.page.getByLabel("Name").fill("Ada");
  await ada.page.getByLabel("Email").fill("ada@example.com");
  await ada.page.getByRole("button", { name: "Save my seat" }).click();
  await ada.page.waitForURL(/\/t\//);
  expect(await ada.page.locator("#position").textContent()).toBe("#2");
  const referralLink = await ada.page.locator("#referral-link").inputValue();
  expect(referralLink).toMatch(new RegExp(`/p/${w.slug}\\?ref=[A-Za-z0-9]+$`));

  const friend = await visitor("198.51.100.2");
  await friend.page.goto(referralLink);
  await friend.page.getByLabel("Email").fill("friend@example.com");
  await friend.page.getByRole("button", { name: "Save my seat" }).click();
  await friend.page.waitForURL(/\/t\//);
  expect(await friend.page.locator("#position").textContent()).toBe("#3");

  await ada.page.reload();
  expect(await ada.page.locator("#position").textContent()).toBe("#1");
  expect(await ada.page.locator("#referrals").textContent()).toBe("1");

  for (const v of [ada, friend]) {
    expect(v.problems).toEqual([]);
    expect(v.offsite).toEqual([]);
    await v.context.close();
  }
  const friendRow = (await s.request("GET", `${path}/subscribers/friend%40example.com`, { key })).body.data.subscriber;
  expect(friendRow.joined_with).toBe("form");
  expect(friendRow.referred_by).toBe(referralLink.split("ref=")[1]);
});

test("the hosted page passes its own CSP and reads well in light and dark, on a phone and a desktop", async () => {
  const { key } = await s.account();
  for (const theme of ["light", "dark"] as const) {
    const created = await s.request("POST", "/api/v1/waitlists", {
      key,
      body: {
        name: `Screens ${theme} ${Math.random().toString(36).slice(2, 8)}`,
        landing_page: { headline: "A calmer inbox is coming", description: "Join the waitlist for early access.\nNo spam, ever.", theme, collect_phone: true },
      },
    });
    const w = created.body.data.waitlist;
    await s.request("POST", `/api/v1/waitlist/${w.key}/landing-page/publish`, { key });
    for (const [label, viewport] of [["phone", { width: 390, height: 844 }], ["desktop", { width: 1280, height: 800 }]] as const) {
      const v = await visitor("192.0.2.9");
      await v.page.setViewportSize(viewport);
      await v.page.goto(`${s.url.replace("127.0.0.1", "localhost")}/p/${w.slug}`);
      await v.page.getByRole("button", { name: "Join the waitlist" }).waitFor();
      expect(await v.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth)).toBe(true);
      await v.page.screenshot({ path: join(ARTIFACTS, `landing-${theme}-${label}.png`), fullPage: true });
      // no CSP violation: the inline theme <style> is allowed by its hash, nothing else inline exists
      expect(v.problems).toEqual([]);
      expect(v.offsite).toEqual([]);
      await v.context.close();
    }
  }
});
