// The ALTCHA captcha in real Chromium (issue 16): the hosted page's widget, served by this server under
// the page's own CSP, solves the challenge on submit and the visitor lands on the thank-you page; the
// confirm-pending page's "send it again" works the same way; the dashboard sets the captcha.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { launchBrowser } from "./support/browser";

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startServer({ env: { RATE_LIMITS: "off" } }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const base = () => s.url.replace("127.0.0.1", "localhost");

/** A tab that records console errors (CSP violations included), uncaught exceptions and off-site requests. */
async function tab(): Promise<{ context: BrowserContext; page: Page; problems: string[]; offsite: string[] }> {
  const context = await browser.newContext();
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

async function publishedWaitlist(settings: Record<string, unknown>) {
  const { key } = await s.account();
  const created = await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Altcha ${uniq()}`, landing_page: { headline: "Proof of work", button_text: "Join" } } });
  const w = created.body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
  expect((await s.request("PATCH", `${path}/settings`, { key, body: settings })).status).toBe(200);
  return { key, w, path };
}

test("the hosted page's widget solves the challenge on submit and the sign-up lands on the thank-you page, with no CSP violation or off-site request", async () => {
  const { key, w, path } = await publishedWaitlist({ captcha: "altcha" });
  const t = await tab();
  const requested: string[] = [];
  t.page.on("request", (r) => requested.push(new URL(r.url()).pathname));
  await t.page.goto(`${base()}/p/${w.slug}`);
  await t.page.locator("altcha-widget").waitFor();
  await t.page.getByLabel("Email").fill("ada@example.com");
  await t.page.getByRole("button", { name: "Join" }).click();
  await t.page.waitForURL(/\/t\//, { timeout: 30_000 });
  expect(await t.page.locator("#position").textContent()).toBe("#1");
  const sub = (await s.request("GET", `${path}/subscribers/ada%40example.com`, { key })).body.data.subscriber;
  expect(sub.joined_with).toBe("form");
  expect(sub.metadata).toEqual({});
  // the proof of work ran in the same-origin worker, on a challenge from this server
  expect(requested).toContain("/assets/altcha/pbkdf2.js");
  expect(requested).toContain(`/s/${w.key}/challenge`);
  expect(t.problems).toEqual([]);
  expect(t.offsite).toEqual([]);
  await t.context.close();
}, 60_000);

test("a team's own site (another origin) embeds the widget as the README shows; the post lands on the thank-you page", async () => {
  const { key, w, path } = await publishedWaitlist({ captcha: "altcha" });
  const origin = base();
  // the team's site: another origin (127.0.0.1 on its own port), which the service counts as allowed
  const site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response(
        `<!doctype html><html><body>
<form method="post" action="${origin}/s/${w.key}">
<label>Email<input type="email" name="email" required></label>
<link rel="stylesheet" href="${origin}/assets/altcha/altcha.css">
<script type="module" src="${origin}/assets/altcha/captcha.js"></script>
<altcha-widget challenge="${origin}/s/${w.key}/challenge" name="altcha" auto="onsubmit"></altcha-widget>
<button>Join</button>
</form></body></html>`,
        { headers: { "content-type": "text/html" } },
      ),
  });
  try {
    const t = await tab();
    await t.page.goto(`http://127.0.0.1:${site.port}/`);
    await t.page.getByLabel("Email").fill("own-site@example.com");
    await t.page.getByRole("button", { name: "Join" }).click();
    await t.page.waitForURL(/\/t\//, { timeout: 30_000 });
    expect((await s.request("GET", `${path}/subscribers/own-site%40example.com`, { key })).status).toBe(200);
    expect(t.problems).toEqual([]);
    expect(t.offsite).toEqual([]);
    await t.context.close();
  } finally {
    site.stop(true);
  }
}, 60_000);

test("the confirm-pending page's button sends the email again through the widget", async () => {
  const { w } = await publishedWaitlist({ captcha: "altcha", double_opt_in: true });
  const t = await tab();
  await t.page.goto(`${base()}/pending/${w.key}`);
  await t.page.getByLabel("Your email").fill("grace@example.com");
  await t.page.getByRole("button", { name: "Send the email again" }).click();
  await t.page.locator("#resend-answer").waitFor({ timeout: 30_000 });
  expect(await t.page.locator("#resend-answer").textContent()).toContain("a new confirmation email is on its way");
  expect(t.problems).toEqual([]);
  expect(t.offsite).toEqual([]);
  await t.context.close();
}, 60_000);

test("the dashboard's settings page shows and saves the captcha setting", async () => {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Dash ${uniq()}` } })).body.data.waitlist;
  const t = await tab();
  await t.page.goto(`${s.url}/dashboard`);
  await t.page.getByLabel("Account API key").fill(key);
  await t.page.getByRole("button", { name: "Sign in", exact: true }).click();
  await t.page.getByRole("heading", { name: "Waitlists", level: 1 }).waitFor();
  await t.page.goto(`${s.url}/dashboard#/w/${w.key}/settings`);
  const select = t.page.getByLabel("Captcha on the public form");
  await select.waitFor();
  expect(await select.inputValue()).toBe("off");
  await select.selectOption("altcha");
  await t.page.getByRole("button", { name: "Save settings" }).click();
  await until(async () => (await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key })).body.data.settings.captcha === "altcha", 5_000, "captcha saved");
  expect(t.problems).toEqual([]);
  await t.context.close();
}, 60_000);
