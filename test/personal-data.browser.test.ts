// Issue 47 "Done when", in real Chromium: a subscriber asks for their data on their status page, follows the emailed
// link (a real SMTP server takes the email), downloads the JSON file, then leaves the waitlist and is erased.
import { afterAll, beforeAll, expect } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { sql } from "drizzle-orm";
import { launchBrowser, test } from "./support/browser";
import { startSmtp, type Smtp } from "./support/peers";
import { startServer, until, type TestServer } from "./support/server";

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

test("get my data by the emailed link, download the file, then leave and be erased", async () => {
  const { key } = await s.account("business");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Data Rights" } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const email = `ada-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const me = (await s.request("POST", `${path}/sign-up`, { key, body: { email, name: "Ada Lovelace", metadata: { company: "Engines" } } })).body;

  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  await page.goto(`${s.url}/t/${me.sign_up_token}`);
  await page.getByRole("link", { name: "Get my data" }).click();
  await page.getByRole("button", { name: "Email me the link" }).click();
  await page.getByRole("heading", { name: "Check your inbox" }).waitFor();

  const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email) && m.subject?.includes("Your data")), 10_000, "the data email");
  const link = /(http\S+\/d\/[A-Za-z0-9]+)/.exec(mail.text ?? "")![1]!;
  await page.goto(link.replace(/^https?:\/\/[^/]+/, s.url));
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download my data" }).click()]);
  expect(download.suggestedFilename()).toBe(`${w.slug}-my-data.json`);
  const document = JSON.parse(readFileSync((await download.path())!, "utf8"));
  expect(document.subscriber).toMatchObject({ email, name: "Ada Lovelace", metadata: { company: "Engines" } });
  expect(document.waitlist).toEqual({ name: "Data Rights" });

  await page.goto(`${s.url}/t/${me.sign_up_token}`);
  await page.getByRole("link", { name: "Leave the waitlist" }).click();
  await page.getByRole("button", { name: "Leave the waitlist" }).click();
  await page.getByRole("heading", { name: "You left the waitlist" }).waitFor();
  expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).status).toBe(404);
  // erased: no email of theirs (the data email included) is left in the outbox
  expect(JSON.stringify(await s.query(sql`SELECT payload FROM outbox`))).not.toContain(email);
  expect(problems).toEqual([]);
  await context.close();
}, 60_000);
