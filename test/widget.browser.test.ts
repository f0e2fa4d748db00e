// The widget for any site (issue 46 item 4) in real Chromium: a team's page on another origin (shop.localhost, a server
// of the test's: Chromium resolves *.localhost to this machine, so no private-network rule stands between) embeds <script src="{BASE_URL}/embed.js" data-waitlist="KEY" async> under a
// hostile stylesheet; a visitor who came through a referral link with UTM parameters signs up with custom answers and
// the captcha on, sees the place in line and the referral link, and the sources and funnel endpoints count it. The
// iframe embed signs up the same way; a site not on the allow-list is told so.
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { launchBrowser, test } from "./support/browser";

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

/** CSS a careless host page might have: none of it may reach the widget's controls. */
const HOSTILE_CSS = `* { font-family: "Comic Sans MS", cursive !important; color: red !important; }
form, label, input, select, button, h2, p { display: none !important; }
button { background: red !important; } input { border: 5px solid red !important; }`;

const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => {
  for (const server of servers) server.stop(true);
});

/**
 * A browser tab, and the team's sites: `pages` by host and path ("shop.localhost/launch"), served on one port of
 * 127.0.0.1 (`at(host, path)` is the address); any request but to them and the service is refused and listed.
 */
async function site(pages: Record<string, string>) {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      const url = new URL(request.url);
      const body = pages[`${(request.headers.get("host") ?? "").replace(/:\d+$/, "")}${url.pathname}`];
      return body === undefined ? new Response("not found", { status: 404 }) : new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  servers.push(server);
  const at = (host: string, path: string) => `http://${host}:${server.port}${path}`;
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  const offsite: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(e.message));
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1" || url.hostname.endsWith(".localhost")) return route.continue();
    offsite.push(url.href);
    return route.abort();
  });
  return { context, page, problems, offsite, at };
}

async function waitlist(settings: Record<string, unknown>) {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Widget ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const patched = await s.request("PATCH", `${path}/settings`, { key, body: settings });
  expect(patched.status).toBe(200);
  return { key, w, path };
}

const QUESTIONS = [
  { key: "role", label: "Your role", type: "select", required: true, options: ["founder", "engineer"] },
  { key: "interests", label: "Interested in", type: "multiselect", options: ["api", "widget"] },
];

test("on another origin, under hostile CSS: custom answers, captcha, ref and UTM; the place in line and the referral link; sources and funnel count it", async () => {
  const { key, w, path } = await waitlist({ form_fields: QUESTIONS, captcha: "altcha", allowed_domains: ["shop.localhost"], email_template: { color: "#0f766e" } });
  const friend = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `friend-${uniq()}@example.com`, answers: { role: "engineer" } } })).body;
  expect(friend.referral_code).toBeString();
  const html = `<!doctype html><html><head><style>${HOSTILE_CSS}</style></head><body><h1>Our launch</h1>
<script src="${s.url}/embed.js" data-waitlist="${w.key}" async></script></body></html>`;
  const t = await site({ "shop.localhost/launch": html });
  await t.page.goto(`${t.at("shop.localhost", "/launch")}?ref=${friend.referral_code}&utm_source=blog&utm_campaign=spring`);

  const email = t.page.getByLabel("Email");
  await email.waitFor();
  expect(await email.isVisible()).toBe(true);
  // the host page's rules stop at the shadow root: the button keeps the waitlist's colour and its own font
  const look = await t.page.getByRole("button", { name: "Join the waitlist" }).evaluate((b) => {
    const style = (globalThis as any).getComputedStyle(b);
    return { background: style.backgroundColor as string, font: style.fontFamily as string, display: style.display as string };
  });
  expect(look.background).toBe("rgb(15, 118, 110)");
  expect(look.font).not.toContain("Comic Sans");
  expect(look.display).not.toBe("none");

  // keyboard: the first Tab reaches the email field
  await t.page.locator("body").click({ position: { x: 1, y: 1 } });
  await t.page.keyboard.press("Tab");
  const focused = (what: "name" | "textContent") => t.page.evaluate(`document.querySelector("waitlist-form").shadowRoot.activeElement?.${what}`);
  expect(await focused("name")).toBe("email");

  const address = `widget-${uniq()}@example.com`;
  await email.fill(address);
  // a required question unanswered: the browser holds the post back, nothing is stored
  await t.page.getByRole("button", { name: "Join the waitlist" }).click();
  expect(await t.page.getByLabel("Your role").evaluate((e) => (e as any).validity.valueMissing as boolean)).toBe(true);
  expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(address)}`, { key })).status).toBe(404);

  await t.page.getByLabel("Your role").selectOption("founder");
  await t.page.getByLabel("api").check();
  await t.page.getByRole("button", { name: "Join the waitlist" }).click();
  const heading = t.page.getByRole("heading", { name: "You're on the list!" });
  await heading.waitFor({ timeout: 30_000 });
  // focus moves to the answer, which is a live region's news
  expect(await focused("textContent")).toBe("You're on the list!");
  const shown = await t.page.getByRole("status").filter({ hasText: "#" }).textContent();
  const link = await t.page.getByLabel("Your referral link").inputValue();

  const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(address)}`, { key })).body.data.subscriber;
  expect(shown).toBe(`#${sub.inflated_position}`);
  expect(link).toBe(`${new URL(sub.thank_you_url).origin}/p/${w.slug}?ref=${sub.referral_code}`);
  expect(sub.answers).toEqual({ role: "founder", interests: ["api"] });
  expect(sub.utm).toEqual({ source: "blog", medium: null, campaign: "spring", term: null, content: null });
  expect(sub.referred_by).toBe(friend.referral_code);
  expect(sub.referring_domain).toBe("shop.localhost");

  const sources = await until(async () => {
    const list = (await s.request("GET", `${path}/stats/sources?days=1`, { key })).body.data.sources as any[];
    const row = list.find((r) => r.source === "blog");
    return row && row.views === 1 ? row : null;
  }, 5_000, "the widget's view counted under its source");
  expect(sources).toEqual({ source: "blog", medium: null, campaign: "spring", views: 1, sign_ups: 1, confirmed: 1 });
  const funnel = (await s.request("GET", `${path}/stats/funnel?days=1`, { key })).body.data;
  expect(funnel).toMatchObject({ views: 1, sign_ups: 2, referrers: 1, referred_sign_ups: 1, invitations: 1, k_factor: 0.5 });

  expect(t.problems).toEqual([]);
  expect(t.offsite).toEqual([]);
  await t.context.close();
}, 60_000);

test("the iframe embed signs up inside the frame; a site not on the allow-list is told to add its domain", async () => {
  const { key, w, path } = await waitlist({ allowed_domains: ["shop.localhost"] });
  const t = await site({
    "shop.localhost/frame": `<!doctype html><html><body><iframe title="Join" src="${s.url}/embed/${w.key}?utm_source=frame" width="500" height="420"></iframe></body></html>`,
    "other.localhost/": `<!doctype html><html><body><script src="${s.url}/embed.js" data-waitlist="${w.key}" async></script></body></html>`,
  });
  await t.page.goto(t.at("shop.localhost", "/frame"));
  const frame = t.page.frameLocator("iframe");
  const address = `frame-${uniq()}@example.com`;
  await frame.getByLabel("Email").fill(address);
  await frame.getByRole("button", { name: "Join the waitlist" }).click();
  await frame.getByRole("heading", { name: "You're on the list!" }).waitFor({ timeout: 15_000 });
  const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(address)}`, { key })).body.data.subscriber;
  expect(sub.utm.source).toBe("frame");
  expect(sub.referrer_host).toBe("shop.localhost");

  await t.page.goto(t.at("other.localhost", "/"));
  const refusal = t.page.getByRole("alert");
  await refusal.waitFor();
  expect(await refusal.textContent()).toContain("add other.localhost to its allowed domains");
  expect(t.problems).toEqual([]);
  expect(t.offsite).toEqual([]);
  await t.context.close();
}, 60_000);
