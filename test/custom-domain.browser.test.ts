// Issue 16, item 10, in real Chromium: a sign-up on a custom domain lands on a thank-you page (the page's
// form-action 'self' allows it), and a referral link of a waitlist with no published page leads to a working form.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM } from "./support/browser";
import { startServer, until, type TestServer } from "./support/server";

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([
    startServer({ env: { RATE_LIMITS: "off" } }),
    // every *.example host is this machine, as DNS would make a customer's domain point at the server
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP *.example 127.0.0.1"],
    }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const port = () => new URL(s.url).port;

/** A page that may only load from `allowed` hosts; CSP reports and anything off-host are collected. */
async function watchedPage(allowed: string[]): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused/i.test(m.text())) problems.push(m.text());
  });
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (allowed.includes(url.host)) return route.continue();
    problems.push(`off-host request ${url}`);
    return route.abort();
  });
  return { page, problems };
}

async function waitlist(name: string) {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name, referral_rewards: { enabled: true } } })).body.data.waitlist;
  return { key, w, path: `/api/v1/waitlist/${w.key}` };
}

test("a sign-up on a custom domain lands on the thank-you page on that domain", async () => {
  const domain = `shop-${uniq()}.example`;
  const { key, path } = await waitlist(`Shop ${uniq()}`);
  expect((await s.request("POST", `${path}/landing-page`, { key, body: { headline: "The shop opens soon" } })).status).toBe(201);
  expect((await s.request("PATCH", `${path}/settings`, { key, body: { custom_domain: domain } })).status).toBe(200);
  expect((await s.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);

  const origin = `http://${domain}:${port()}`;
  const { page, problems } = await watchedPage([`${domain}:${port()}`]);
  const landing = await page.goto(`${origin}/`);
  expect(landing!.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("The shop opens soon");
  const email = `shopper-${uniq()}@example.com`;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Join the waitlist" }).click();
  await page.waitForURL(`${origin}/t/**`, { timeout: 10_000 });
  await expect(page.locator("h1").textContent()).resolves.toContain("on the list!");
  await expect(page.locator("#position").textContent()).resolves.toBe("#1");
  const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  expect(page.url()).toBe(`${origin}/t/${sub.sign_up_token}`);
  // the referral link leads back to the custom domain (BASE_URL's scheme, as hosted_page_url)
  await expect(page.locator("#referral-link").inputValue()).resolves.toBe(`http://${domain}/?ref=${sub.referral_code}`);
  expect(problems).toEqual([]);
  await page.context().close();
});

test("a referral link of a waitlist with no published page opens a form that signs the friend up, credited", async () => {
  const { key, path, w } = await waitlist(`Quiet <launch> ${uniq()}`);
  const referrer = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `ref-${uniq()}@example.com`, metadata: { client_ip: "203.0.113.1" } } })).body;
  const status = await fetch(`${s.url}/t/${referrer.sign_up_token}`);
  const link = /id="referral-link" type="text" readonly value="([^"]*)"/.exec(await status.text())![1];
  const base = s.url.replace("127.0.0.1", "localhost");
  expect(link).toBe(`${base}/p/${w.slug}?ref=${referrer.referral_code}`);

  const { page, problems } = await watchedPage([`localhost:${port()}`]);
  const landing = await page.goto(link);
  expect(landing!.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe(`Join the ${w.name} waitlist`);
  const email = `friend-${uniq()}@example.com`;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Join the waitlist" }).click();
  await page.waitForURL(`${base}/t/**`, { timeout: 10_000 });
  await expect(page.locator("h1").textContent()).resolves.toContain("on the list!");
  const friend = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  expect(friend.referred_by).toBe(referrer.referral_code);
  await until(async () => (await s.request("GET", `${path}/subscribers?sort_by=referral_count&limit=1`, { key })).body.data.subscribers[0].referral_count === 1, 5_000, "referral credit");
  expect(problems).toEqual([]);
  await page.context().close();
});
