// Where sign-ups come from and the referral loop in numbers (issue 46 items 2 and 3): UTM parameters and the referring
// host carried from a page's address into the form, the form action's Referer fallback, API metadata, share clicks
// from the status page, and GET .../stats/sources and .../stats/funnel counting them, over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startServer, until, type TestServer } from "./support/server";

let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
  ({ key } = await s.account("growth"));
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

async function waitlist(settings: Record<string, unknown> = {}) {
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Growth ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (Object.keys(settings).length) expect((await s.request("PATCH", `${path}/settings`, { key, body: settings })).status).toBe(200);
  return { w, path };
}

/** A page as a visitor with its own User-Agent (so each is a new visitor) sees it. */
const visit = (pathAndQuery: string, headers: Record<string, string> = {}) => fetch(`${s.url}${pathAndQuery}`, { headers: { "user-agent": `visitor-${uniq()}`, ...headers } });

/** The hidden inputs of a page's form, by name. */
function hiddenInputs(html: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) found[m[1]!] = m[2]!;
  return found;
}

const postForm = (waitlistKey: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/s/${waitlistKey}`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", origin: s.url, ...headers },
  });

const subscriber = async (path: string, email: string) => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;

describe("where sign-ups come from", () => {
  test("a page carries its link's UTM parameters and the referring host into its form; the sign-up keeps them as utm and referrer_host", async () => {
    const { w, path } = await waitlist();
    const page = await visit(`/p/${w.slug}?utm_source=newsletter&utm_medium=email&utm_campaign=launch&utm_term=early&utm_content=top&fbclid=abc`, {
      referer: "https://mail.example.org/inbox/1",
    });
    expect(page.status).toBe(200);
    const inputs = hiddenInputs(await page.text());
    expect(inputs).toEqual({
      utm_source: "newsletter",
      utm_medium: "email",
      utm_campaign: "launch",
      utm_term: "early",
      utm_content: "top",
      referrer_host: "mail.example.org",
    });
    const email = `page-${uniq()}@example.com`;
    expect((await postForm(w.key, { email, ...inputs })).status).toBe(200);
    const sub = await subscriber(path, email);
    expect(sub.utm).toEqual({ source: "newsletter", medium: "email", campaign: "launch", term: "early", content: "top" });
    expect(sub.referrer_host).toBe("mail.example.org");
  });

  test("the page escapes every value, drops what is unusable and is never a 400; a Referer from this service is not a source", async () => {
    const { w } = await waitlist();
    const evil = `"><script>alert(1)</script>`;
    const page = await visit(`/p/${w.slug}?utm_campaign=${encodeURIComponent(evil)}&utm_source=${"x".repeat(300)}&ref=bad%20code`, { referer: `${s.url}/t/whatever` });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain("<script>alert(1)");
    expect(hiddenInputs(html)).toEqual({ utm_campaign: "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" });
  });

  test("the form action takes the Referer's UTM parameters when the post has none; API sign-ups take them from metadata, where they stay", async () => {
    const { w, path } = await waitlist();
    const fromReferer = `referer-${uniq()}@example.com`;
    const posted = await postForm(w.key, { email: fromReferer }, { origin: "", referer: `${s.url}/landing?utm_source=twitter&utm_campaign=spring&ref=zzz` });
    expect(posted.status).toBe(200);
    expect((await subscriber(path, fromReferer)).utm).toEqual({ source: "twitter", medium: null, campaign: "spring", term: null, content: null });

    const api = `api-${uniq()}@example.com`;
    const r = await s.request("POST", `${path}/sign-up`, {
      key,
      body: { email: api, metadata: { utm_source: "ads", utm_medium: "cpc", referrer_host: "https://www.google.com/search?q=rocket", plan: "pro" } },
    });
    expect(r.status).toBe(200);
    const sub = await subscriber(path, api);
    expect(sub.utm).toEqual({ source: "ads", medium: "cpc", campaign: null, term: null, content: null });
    expect(sub.referrer_host).toBe("www.google.com");
    // the spec keeps every other metadata key as a custom field: they are there too
    expect(sub.metadata).toEqual({ utm_source: "ads", utm_medium: "cpc", referrer_host: "https://www.google.com/search?q=rocket", plan: "pro" });

    // a value that is not a usable string stays a custom field only
    const odd = `odd-${uniq()}@example.com`;
    expect((await s.request("POST", `${path}/sign-up`, { key, body: { email: odd, metadata: { utm_source: 7, referrer_host: "not a host" } } })).status).toBe(200);
    const oddSub = await subscriber(path, odd);
    expect(oddSub.utm.source).toBeNull();
    expect(oddSub.referrer_host).toBeNull();
    expect(oddSub.metadata).toEqual({ utm_source: 7, referrer_host: "not a host" });
  });

  test("GET .../stats/sources counts views, sign-ups and confirmed sign-ups by source, medium and campaign", async () => {
    const { w, path } = await waitlist();
    const campaign = hiddenInputs(await (await visit(`/p/${w.slug}?utm_source=newsletter&utm_medium=email&utm_campaign=launch`)).text());
    await visit(`/p/${w.slug}?utm_source=newsletter&utm_medium=email&utm_campaign=launch`);
    await visit(`/p/${w.slug}`, { referer: "https://news.ycombinator.com/item?id=1" });
    await visit(`/p/${w.slug}`);
    for (let i = 0; i < 2; i++) expect((await postForm(w.key, { email: `news-${i}-${uniq()}@example.com`, ...campaign })).status).toBe(200);
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `direct-${uniq()}@example.com` } });

    const sources = await until(async () => {
      const r = await s.request("GET", `${path}/stats/sources?days=7`, { key });
      expect(r.status).toBe(200);
      const list = r.body.data.sources as any[];
      return list.reduce((t, x) => t + x.views, 0) === 4 ? list : null;
    }, 5_000, "the four views counted");
    expect(sources).toEqual([
      { source: "newsletter", medium: "email", campaign: "launch", views: 2, sign_ups: 2, confirmed: 2 },
      { source: null, medium: null, campaign: null, views: 1, sign_ups: 1, confirmed: 1 },
      { source: "news.ycombinator.com", medium: null, campaign: null, views: 1, sign_ups: 0, confirmed: 0 },
    ]);

    for (const bad of ["0", "366", "x"]) {
      const r = await s.request("GET", `${path}/stats/sources?days=${bad}`, { key });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain("days");
    }
  });

  test("log-view's metadata counts a view under its source and a referral visit as an invitation", async () => {
    const { path } = await waitlist();
    const r = await s.request("POST", `${path}/log-view`, { key, body: { visitor_id: `v-${uniq()}`, metadata: { utm_source: "partner", utm_campaign: "beta", ref: "ABC123" } } });
    expect(r.body.success).toBe(true);
    const sources = (await s.request("GET", `${path}/stats/sources`, { key })).body.data.sources;
    expect(sources).toEqual([{ source: "partner", medium: null, campaign: "beta", views: 1, sign_ups: 0, confirmed: 0 }]);
    expect((await s.request("GET", `${path}/stats/funnel?days=1`, { key })).body.data.invitations).toBe(1);
  });
});

describe("the referral loop in numbers", () => {
  test("share clicks, referral visits and referred sign-ups make the funnel and its K; each share counts once per channel and day", async () => {
    const { w, path } = await waitlist();
    const a = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `a-${uniq()}@example.com` } })).body;
    const share = (token: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/t/${token}/share`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

    // the status page names where to count, and each share button its channel
    const status = await (await fetch(`${s.url}/t/${a.sign_up_token}`)).text();
    expect(status).toContain(`data-share-url="/t/${a.sign_up_token}/share"`);
    for (const channel of ["x", "facebook", "linkedin", "whatsapp", "email", "copy"]) expect(status).toContain(`data-share="${channel}"`);

    for (const channel of ["x", "x", "copy"]) {
      const r = await share(a.sign_up_token, { channel }, { origin: s.url });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ success: true });
    }
    const bad = await share(a.sign_up_token, { channel: "carrier-pigeon" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain("channel");
    expect((await share("no-such-token", { channel: "x" })).status).toBe(404);
    expect((await share(a.sign_up_token, { channel: "x" }, { origin: "https://evil.example" })).status).toBe(403);

    // a friend follows the referral link and joins through the page's form
    const page = await visit(`/p/${w.slug}?ref=${a.referral_code}`);
    const inputs = hiddenInputs(await page.text());
    expect(inputs.ref).toBe(a.referral_code);
    expect((await postForm(w.key, { email: `b-${uniq()}@example.com`, ...inputs })).status).toBe(200);
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `c-${uniq()}@example.com` } });

    const funnel = await until(async () => {
      const r = await s.request("GET", `${path}/stats/funnel?days=3`, { key });
      expect(r.status).toBe(200);
      return r.body.data.views === 1 ? r.body.data : null;
    }, 5_000, "the referral visit counted");
    // invitations: x and copy (the repeated x counts once) and the referral visit; one of three sign-ups referred
    const numbers = { views: 1, sign_ups: 3, confirmed: 3, shares: 1, referrers: 1, invitations: 3, referred_sign_ups: 1, k_factor: 0.3333 };
    expect(funnel).toEqual({ ...numbers, days: expect.any(Array) });
    expect(funnel.days.map((d: any) => d.date)).toEqual([2, 1, 0].map((ago) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10)));
    expect(funnel.days[2]).toEqual({ date: funnel.days[2].date, ...numbers });
    expect(funnel.days[0]).toEqual({ date: funnel.days[0].date, views: 0, sign_ups: 0, confirmed: 0, shares: 0, referrers: 0, invitations: 0, referred_sign_ups: 0, k_factor: 0 });
  });

  test("a subscriber who has not confirmed has nothing to share (409); a waitlist without invitations has K 0", async () => {
    const { path } = await waitlist({ double_opt_in: true });
    const email = `p-${uniq()}@example.com`;
    const pending = (await s.request("POST", `${path}/sign-up`, { key, body: { email } })).body;
    expect(pending.is_pending_confirmation).toBe(true);
    // its status link exists before confirmation (the page asks to confirm first)
    const [row] = await s.query<{ sign_up_token: string }>(sql`SELECT sign_up_token FROM subscribers WHERE email = ${email}`);
    const r = await fetch(`${s.url}/t/${row!.sign_up_token}/share`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ channel: "x" }) });
    expect(r.status).toBe(409);
    const funnel = (await s.request("GET", `${path}/stats/funnel?days=1`, { key })).body.data;
    expect(funnel).toMatchObject({ sign_ups: 1, confirmed: 0, shares: 0, invitations: 0, k_factor: 0 });
  });
});

describe("the widget over HTTP (issue 46 item 4)", () => {
  test("embed.js and its configuration are under 15 KB gzipped together, readable from any site; the configuration says whether the site may post", async () => {
    const { w } = await waitlist({ allowed_domains: ["shop.example"], form_fields: [{ key: "role", label: "Role <b>", type: "text", required: true }] });
    const js = await fetch(`${s.url}/embed.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toStartWith("text/javascript");
    expect(js.headers.get("access-control-allow-origin")).toBe("*");
    const script = new Uint8Array(await js.arrayBuffer());
    const widget = await fetch(`${s.url}/s/${w.key}/widget`, { headers: { origin: "https://shop.example" } });
    expect(widget.status).toBe(200);
    expect(widget.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const configText = await widget.text();
    expect(Bun.gzipSync(script).length + Bun.gzipSync(configText).length).toBeLessThan(15 * 1024);
    const config = JSON.parse(configText);
    expect(config).toMatchObject({ key: w.key, allowed: true, theme: "light", captcha: "off", questions: [{ key: "role", label: "Role <b>", type: "text", required: true }] });
    expect(config.referral_link).toContain("REFERRALCODE");
    const foreign = await (await fetch(`${s.url}/s/${w.key}/widget`, { headers: { origin: "https://elsewhere.example" } })).json();
    expect((foreign as { allowed: boolean }).allowed).toBe(false);
    expect((await fetch(`${s.url}/s/no-such-key/widget`)).status).toBe(404);
  });

  test("the widget's view counts for an allowed site only; the iframe page may be framed by the allowed domains only", async () => {
    const { w, path } = await waitlist({ allowed_domains: ["shop.example", "*.partner.example"] });
    const view = (origin: string) =>
      fetch(`${s.url}/s/${w.key}/view`, { method: "POST", headers: { origin, "user-agent": `ua-${uniq()}` }, body: new URLSearchParams({ utm_source: "widget", ref: "abc" }) });
    const refused = await view("https://elsewhere.example");
    expect(refused.status).toBe(403);
    const counted = await view("https://shop.example");
    expect(counted.status).toBe(200);
    expect(await counted.json()).toEqual({ success: true, counted: true });
    expect(counted.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const sources = (await s.request("GET", `${path}/stats/sources?days=1`, { key })).body.data.sources;
    expect(sources).toEqual([{ source: "widget", medium: null, campaign: null, views: 1, sign_ups: 0, confirmed: 0 }]);

    const frame = await fetch(`${s.url}/embed/${w.key}?utm_source=frame`);
    expect(frame.status).toBe(200);
    const csp = frame.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'self' shop.example:* *.partner.example:*");
    expect(csp).toContain("script-src 'self'");
    expect(await frame.text()).toContain(`<script src="/embed.js" data-waitlist="${w.key}"`);
    expect((await fetch(`${s.url}/embed/no-such-key`)).status).toBe(404);
  });
});
