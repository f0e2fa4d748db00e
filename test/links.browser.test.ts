// The link pages' buttons in real Chromium (issue 16): each page's form POSTs under its own CSP
// (form-action 'self', redirects included): confirm, then stop emails and leave from the status page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";
import { isolatedPage, launchBrowser } from "./support/browser";

let s: TestServer;
let smtp: Smtp;
let browser: Browser;
beforeAll(async () => {
  smtp = await startSmtp();
  [s, browser] = await Promise.all([startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url } }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await smtp?.close();
});

test("a confirmation link's button confirms and lands on the status page; from there, stop emails and leave the waitlist each take one button", async () => {
  // BASE_URL defaults to http://localhost:{port}: the browser stays on that origin throughout
  const origin = s.url.replace("127.0.0.1", "localhost");
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Browser links ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true } });
  const email = `browser-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await s.request("POST", `${path}/sign-up`, { key, body: { email } });
  const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email)), 5_000, "confirmation email");
  const link = String(mail.text).match(/https?:\/\/\S+\/confirm\/[A-Za-z0-9]+/)![0];
  expect(link.startsWith(origin)).toBe(true);
  const subscriber = async () => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key }));

  const { page, offsite } = await isolatedPage(browser, origin);
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(e.message));

  await page.goto(link);
  expect((await subscriber()).body.data.subscriber.status).toBe("pending");
  await page.getByRole("button", { name: "Confirm my email" }).click();
  await page.waitForURL(/\/t\/[A-Za-z0-9]+$/);
  const me = (await subscriber()).body.data.subscriber;
  expect(page.url()).toBe(me.thank_you_url);
  expect(await page.locator("#position").textContent()).toBe("#1");

  await page.getByRole("link", { name: "Stop emails" }).click();
  await page.getByRole("button", { name: "Unsubscribe" }).click();
  await page.getByRole("heading", { name: "You're unsubscribed" }).waitFor();
  expect((await subscriber()).body.data.subscriber).toMatchObject({ status: "waiting", position: 1, unsubscribed_at: expect.any(Number) });

  await page.getByRole("link", { name: "See your place in line" }).click();
  expect(await page.locator("#emails-off").textContent()).toBe("Emails are off");
  await page.getByRole("link", { name: "Leave the waitlist" }).click();
  await page.getByRole("button", { name: "Leave the waitlist" }).click();
  await page.getByRole("heading", { name: "You left the waitlist" }).waitFor();
  expect((await subscriber()).status).toBe(404);

  expect(problems).toEqual([]);
  expect(offsite).toEqual([]);
});

test("an invite link's button accepts and the browser follows the redirect to the team's app (the page's CSP allows exactly that origin)", async () => {
  const origin = s.url.replace("127.0.0.1", "localhost");
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Browser invite ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  await s.request("PATCH", `${path}/settings`, { key, body: { invite_redirect_url: "https://app.example.com/welcome" } });
  const email = `invitee-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await s.request("POST", `${path}/sign-up`, { key, body: { email } });
  await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [email] } });
  const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email)), 5_000, "invitation email");
  const link = String(mail.text).match(/https?:\/\/\S+\/i\/[A-Za-z0-9]+/)![0];
  const token = link.split("/").pop()!;

  const { page, offsite } = await isolatedPage(browser, origin);
  const refused: string[] = [];
  page.on("console", (m) => /Content Security Policy|form-action/i.test(m.text()) && refused.push(m.text()));
  await page.goto(link);
  await page.getByRole("button", { name: "Accept my invitation" }).click({ noWaitAfter: true });
  // the isolated browser aborts the off-site navigation, and records that it was attempted
  await until(() => offsite.includes(`https://app.example.com/welcome?token=${token}`), 5_000, "the redirect to the team's app");
  expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber.status).toBe("joined");
  expect(refused).toEqual([]);
});
