// The status page /t/{sign_up_token} in real Chromium (issue 11 item 5): place in line, referrals,
// the next reward, the leaderboard and the share links, under its CSP, on a phone.
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { isolatedPage, launchBrowser, test } from "./support/browser";

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

test("a referrer's status page shows the place in line (kept current), the referrals, the next reward, the leaderboard and working share links", async () => {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Status ${Math.random().toString(36).slice(2, 8)}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  await s.request("PATCH", `${path}/settings`, { key, body: { leaderboard: true, position_offset: 100, milestones: [{ referrals: 3, reward: "Early access" }, { referrals: 10, reward: "Free year" }] } });
  await s.request("POST", `${path}/sign-up`, { key, body: { email: "first@example.com" } });
  const me = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "ada@example.com", name: "Ada Lovelace" } })).body;
  for (let i = 0; i < 3; i++) await s.request("POST", `${path}/sign-up`, { key, body: { email: `friend${i}@example.com`, metadata: { referred_by: me.referral_code } } });

  const { page, offsite } = await isolatedPage(browser, s.url);
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(e.message));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${s.url}/t/${me.sign_up_token}`);
  // three referrals moved Ada ahead of the first sign-up: #1, shown with the offset
  expect(await page.locator("#position").textContent()).toBe("#101");
  expect(await page.locator("#referrals").textContent()).toBe("3");
  expect(await page.locator("#next-milestone").textContent()).toBe("Next reward: Free year at 10 referrals: 7 more to go.");
  expect(await page.locator(".rewards li.reached").textContent()).toContain("Early access ✓");
  expect(await page.locator(".leaderboard li").allTextContents()).toEqual(["Ada3"]);
  const link = await page.locator("#referral-link").inputValue();
  expect(link).toBe(`${s.url.replace("127.0.0.1", "localhost")}/p/${w.slug}?ref=${me.referral_code}`);
  const share = await page.locator(".networks a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
  expect(share.every((href) => href.includes(encodeURIComponent(link)))).toBe(true);
  await page.screenshot({ path: join(ARTIFACTS, "status-page-phone.png"), fullPage: true });
  // live: someone moves ahead, and the page follows when the visitor comes back to the tab
  await s.request("PUT", `${path}/subscribers/first@example.com`, { key, body: { points: 10_000 } });
  await page.evaluate("window.dispatchEvent(new Event('focus'))");
  await until(async () => (await page.locator("#position").textContent()) === "#102", 5_000, "the position to refresh");
  const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
  expect(overflow).toBeLessThanOrEqual(0);
  expect(problems).toEqual([]);
  expect(offsite).toEqual([]);
});
