// The dashboard's broadcasts page (issue 45 item 6) in real Chromium, against the real server and a real SMTP server:
// compose with a live preview (the segment's count, the first recipient's email), test-send, send, watch progress
// and the counts. Screenshots go to test/artifacts/ for a person to look at.
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { describe, launchBrowser, test } from "./support/browser";
import { startSmtp, type Smtp } from "./support/peers";

const ARTIFACTS = join(import.meta.dir, "artifacts");
let s: TestServer;
let smtp: Smtp;
let browser: Browser;
beforeAll(async () => {
  smtp = await startSmtp();
  [s, browser] = await Promise.all([startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url, MAIL_FROM: "Rocket <news@rocket.example>", MAIL_RATE_PER_MINUTE: "6000" } }), launchBrowser()]);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await smtp?.close();
});

const SEE_MS = 5_000;
const textOf = (page: Page, selector: string) => page.locator(selector).first().textContent({ timeout: 500 }).catch(() => null);

describe("broadcasts in the dashboard", () => {
  test("compose with a live preview of the segment's count and email, send a test, send, and see it sent with its counts", async () => {
    const { key } = await s.account("growth");
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Rocket ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
    const path = `/api/v1/waitlist/${w.key}`;
    for (const [email, name, tags] of [
      ["ada@example.com", "Ada Lovelace", ["beta"]],
      ["grace@example.com", "Grace Hopper", ["beta"]],
      ["alan@example.com", "Alan Turing", []],
    ] as const) {
      expect((await s.request("POST", `${path}/sign-up`, { key, body: { email, name } })).status).toBe(200);
      if (tags.length) await s.request("POST", `${path}/subscribers/${email}/tags`, { key, body: { tags } });
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && !/status of 4\d\d/.test(m.text()) && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${s.url}/dashboard`);
    await page.getByLabel("Account API key").fill(key);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Waitlists", level: 1 }).waitFor();
    await page.goto(`${s.url}/dashboard#/w/${w.key}`);
    await page.getByRole("link", { name: "Broadcasts" }).click();
    await page.getByLabel("Subject").fill("Beta news for {{first_name}}");
    await page.getByRole("button", { name: "Write it" }).click();

    // the draft: everyone confirmed at first, then the beta tag only
    await until(async () => (await textOf(page, "[data-recipients]")) === "3", SEE_MS, "3 recipients");
    await page.getByLabel("Message").fill("Hi {{first_name}},\n\nThe **beta** opens Monday.");
    await page.getByLabel("With any of these tags").selectOption(["beta"]);
    await until(async () => (await textOf(page, "[data-recipients]")) === "2", SEE_MS, "2 recipients");
    await until(async () => (await textOf(page, ".preview-subject")) === "Beta news for Ada", SEE_MS, "the previewed subject");
    const frame = page.frameLocator("iframe.email-frame");
    await until(async () => (await frame.locator("strong").first().textContent({ timeout: 500 }).catch(() => null)) === "beta", SEE_MS, "the HTML preview");
    expect(await frame.locator("body").textContent()).toContain("Hi Ada,");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-broadcast-compose.png"), fullPage: true });

    // a test copy to the team
    await page.getByLabel("Send a test to").fill("team@rocket.example");
    await page.getByRole("button", { name: "Send test" }).click();
    const copy = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes("team@rocket.example")), SEE_MS, "the test copy");
    expect(copy.subject).toBe("[Test] Beta news for Ada");

    // send, confirm, and watch it through to sent
    await page.getByRole("button", { name: "Send now" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Send" }).click();
    await until(async () => (await page.locator("[data-status]").first().getAttribute("data-status", { timeout: 500 }).catch(() => null)) === "sent", 20_000, "the broadcast to be sent");
    expect(await textOf(page, '[data-count="sent"] strong')).toBe("2");
    expect(await textOf(page, '[data-count="recipients"] strong')).toBe("2");
    const got = smtp.messages.filter((m) => m.subject?.startsWith("Beta news for")).map((m) => m.subject).sort();
    expect(got).toEqual(["Beta news for Ada", "Beta news for Grace"]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-broadcast-sent.png"), fullPage: true });

    // the list shows it with its counts
    await page.getByRole("link", { name: "All broadcasts" }).click();
    await until(async () => (await textOf(page, 'table.broadcasts [data-count="sent"]')) === "2", SEE_MS, "the list's counts");
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
