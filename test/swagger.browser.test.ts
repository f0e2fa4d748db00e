// Swagger UI in real Chromium, as a new user would: authorize with a key, call GET /api/v1/me, offline.
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser } from "playwright-core";
import { startServer, type TestServer } from "./support/server";
import { isolatedPage, launchBrowser, test } from "./support/browser";

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("Swagger UI loads with no third-party request, authorizes with X-Api-Key and calls /api/v1/me", async () => {
  const { key, username } = await s.account("growth");
  const { page, offsite } = await isolatedPage(browser, s.url);
  // CSP violations and script errors show as console errors
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(e.message));
  const ui = await page.goto(`${s.url}/swagger`);
  expect(ui!.headers()["content-security-policy"]).toContain("script-src 'self';");
  await page.getByText("Waitlist API", { exact: false }).first().waitFor({ timeout: 15_000 });

  await page.locator("button.authorize").first().click();
  const dialog = page.locator(".modal-ux");
  // the key's own scheme (the dialog also offers the dashboard's session cookie, issue 48)
  const apiKeyForm = dialog.locator("form").filter({ hasText: "X-Api-Key" });
  await apiKeyForm.locator("input").first().fill(key);
  await apiKeyForm.locator("button.modal-btn.authorize").click();
  await dialog.locator("button.btn-done").first().click();

  const op = page.locator(".opblock-get", { has: page.locator('[data-path="/api/v1/me"]') });
  await op.locator(".opblock-summary").click();
  await op.getByRole("button", { name: "Try it out" }).click();
  await op.getByRole("button", { name: "Execute" }).click();
  const status = op.locator(".live-responses-table tr.response .response-col_status").first();
  await status.waitFor({ timeout: 15_000 });
  expect((await status.textContent())?.trim()).toBe("200");
  const body = await op.locator(".live-responses-table tr.response .response-col_description pre").first().textContent();
  const parsed = JSON.parse(body ?? "{}");
  expect(parsed.data.account.username).toBe(username);
  expect(parsed.data.plan).toEqual({ name: "Growth", api_access: true });
  expect(offsite).toEqual([]);
  expect(problems).toEqual([]);
});
