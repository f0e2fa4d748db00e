// spec: Landing page resource, Landing page status table, Landing pages endpoints, Waitlists (landing_page), Errors,
// Limits (landing-page buckets); DESIGN §3 (LANDING_PAGE_API) and §4 (landing pages, forms and pages). Over real HTTP.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";

const BASE_URL = "http://wl.test.example";
const ALLOWED_KEYS = ["headline", "description", "button_text", "collect_name", "collect_phone", "background", "theme", "seo"];

let s: TestServer; // BASE_URL fixed, RATE_LIMITS=off
let off: TestServer; // LANDING_PAGE_API=off
let limited: TestServer; // default rate limits
let biz: string;
beforeAll(async () => {
  [s, off, limited] = await Promise.all([
    startServer({ env: { BASE_URL, RATE_LIMITS: "off" } }),
    startServer({ env: { RATE_LIMITS: "off", LANDING_PAGE_API: "off" } }),
    startServer({ env: { BASE_URL } }),
  ]);
  biz = (await s.account("business")).key;
});
afterAll(() => Promise.all([s.stop(), off.stop(), limited.stop()]));

const uniq = () => Math.random().toString(36).slice(2, 8);
const badRequest = { statusCode: 400, error: "Bad Request", message: expect.any(String) };
const notFound = { statusCode: 404, error: "Not Found", message: expect.any(String) };

/** A fresh waitlist and helpers for its landing page. */
async function waitlist(opts: { server?: TestServer; key?: string; body?: Record<string, unknown> } = {}) {
  const server = opts.server ?? s;
  const key = opts.key ?? biz;
  const r = await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Landing ${uniq()} ${uniq()}`, ...opts.body } });
  expect(r.status, r.text).toBe(201);
  const w = r.body.data.waitlist as { id: string; key: string; slug: string; name: string };
  const path = `/api/v1/waitlist/${w.key}/landing-page`;
  return {
    w,
    key,
    path,
    create: (body: unknown) => server.request("POST", path, { key, body }),
    get: () => server.request("GET", path, { key }),
    patch: (body: unknown) => server.request("PATCH", path, { key, body }),
    publish: (body?: unknown) => server.request("POST", `${path}/publish`, { key, body }),
    stats: async () => (await server.request("GET", `/api/v1/waitlist/${w.key}/stats`, { key })).body.data,
    settings: async (body: Record<string, unknown>) => {
      const p = await server.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body });
      expect(p.status, p.text).toBe(200);
    },
  };
}
type Wl = Awaited<ReturnType<typeof waitlist>>;

/** A waitlist with a page created from `body` (201 asserted). */
async function withPage(body: Record<string, unknown> = { headline: "Launching soon" }) {
  const wl = await waitlist();
  const r = await wl.create(body);
  expect(r.status, r.text).toBe(201);
  return wl;
}

/** A waitlist with a published page. */
async function published(body: Record<string, unknown> = { headline: "Launching soon" }) {
  const wl = await withPage(body);
  const p = await wl.publish();
  expect(p.status, p.text).toBe(200);
  return wl;
}

async function page(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(s.url + path, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** The first tag matching `pattern` (for asserting attributes whatever their order). */
const tag = (html: string, pattern: RegExp) => html.match(pattern)?.[0] ?? null;
const inputNamed = (html: string, name: string) => tag(html, new RegExp(`<input\\b[^>]*\\bname="${name}"[^>]*>`));

describe("create (POST .../landing-page)", () => {
  test("201 returns exactly id, draft status, standard type, preview, null hosted_page_url and a draft note; button_text defaults", async () => {
    const wl = await waitlist();
    const r = await wl.create({ headline: "Launching soon", description: "A better way to wait." });
    expect(r.status, r.text).toBe(201);
    expect(r.body.success).toBe(true);
    expect(r.body.data.landing_page).toEqual({
      id: expect.any(String),
      status: "draft",
      page_type: "standard",
      preview: { headline: "Launching soon", description: "A better way to wait.", button_text: "Join the waitlist" },
      hosted_page_url: null,
      draft_note: expect.any(String),
    });
    expect(Object.keys(r.body.data.landing_page).sort()).toEqual(["draft_note", "hosted_page_url", "id", "page_type", "preview", "status"]);
    expect(r.body.data.landing_page.draft_note.length).toBeGreaterThan(0);

    const custom = await (await waitlist()).create({ headline: "Launching soon", button_text: "Count me in" });
    expect(custom.body.data.landing_page.preview).toEqual({ headline: "Launching soon", description: null, button_text: "Count me in" });
  });

  test("a second create on the same waitlist is 409 and leaves the first page as it was", async () => {
    const wl = await withPage({ headline: "First page" });
    const before = (await wl.get()).body.data.landing_page;
    const r = await wl.create({ headline: "Second page" });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ statusCode: 409, error: "Conflict", message: expect.any(String) });
    expect((await wl.get()).body.data.landing_page).toEqual(before);
  });

  test("missing, too short, too long, over-cap, non-plain-text and unsafe values are 400 and create nothing", async () => {
    const wl = await waitlist();
    const cases: unknown[] = [
      {},
      { description: "No headline" },
      { headline: "ab" },
      { headline: "x".repeat(121) },
      { headline: "Launching soon", description: "d".repeat(1001) },
      { headline: "Launching soon", button_text: "b".repeat(41) },
      { headline: "Launching soon", seo: { title: "t".repeat(71) } },
      { headline: "Launching soon", seo: { description: "d".repeat(201) } },
      { headline: "Launching soon", seo: { keywords: Array.from({ length: 11 }, (_, i) => `k${i}`) } },
      { headline: "Launching soon", seo: { keywords: ["ok", "k".repeat(41)] } },
      { headline: "<b>Hi</b> there" },
      { headline: "Launching soon", description: "Hello <script>alert(1)</script>" },
      { headline: "Launching soon", seo: { title: "<i>x</i>" } },
      { headline: "Launching soon", button_text: "<em>Go</em>" },
      { headline: "Launching soon", seo: { keywords: ["fine", "<b>k</b>"] } },
      { headline: "Launching soon", seo: { og_description: "<img src=x onerror=alert(1)>" } },
      { headline: "Launching soon", theme: "blue" },
      { headline: "Launching soon", background: { type: "color", value: "red; background:url(https://evil)" } },
      { headline: "Launching soon", background: { type: "gradient", value: "linear-gradient(90deg, url(https://evil.example/x.png) 0%, #000 100%)" } },
      { headline: "Launching soon", background: { type: "gradient", value: "url(https://evil.example/x.png)" } },
    ];
    for (const body of cases) {
      const r = await wl.create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toEqual(badRequest);
    }
    const g = await wl.get();
    expect(g.status).toBe(404);
  });

  test("an unknown key is 400 and the message lists every allowed key", async () => {
    const wl = await waitlist();
    const r = await wl.create({ headline: "Launching soon", subtitle: "nope" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(badRequest);
    expect(r.body.message).toContain("subtitle");
    for (const k of ALLOWED_KEYS) expect(r.body.message).toContain(k);
    expect((await wl.get()).status).toBe(404);
  });

  test("values exactly at the caps are accepted: headline 3 and 120, description 1000, button_text 40, seo 70/200/10 keywords of 40", async () => {
    const accepted: Record<string, unknown>[] = [
      { headline: "abc" },
      { headline: "h".repeat(120) },
      { headline: "Launching soon", description: "d".repeat(1000) },
      { headline: "Launching soon", button_text: "b".repeat(40) },
      {
        headline: "Launching soon",
        seo: { title: "t".repeat(70), description: "d".repeat(200), keywords: Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(40, "k")) },
      },
    ];
    for (const body of accepted) {
      const wl = await waitlist();
      const r = await wl.create(body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(201);
      const got = (await wl.get()).body.data.landing_page;
      expect(got.headline).toBe(body.headline as string);
      if (body.description) expect(got.description).toBe(body.description as string);
      if (body.button_text) expect(got.button_text).toBe(body.button_text as string);
      if (body.seo) expect(got.seo).toEqual({ og_title: null, og_description: null, ...(body.seo as object) });
    }
  });

  test("a hex color background is kept; a gradient is stored re-emitted in canonical lowercase form", async () => {
    const color = await withPage({ headline: "Launching soon", background: { type: "color", value: "#12ab3f" } });
    expect((await color.get()).body.data.landing_page.background).toEqual({ type: "color", value: "#12ab3f" });
    const gradient = await withPage({ headline: "Launching soon", background: { type: "gradient", value: "linear-gradient(90deg, #FFF 0%, #000 100%)" } });
    expect((await gradient.get()).body.data.landing_page.background).toEqual({ type: "gradient", value: "linear-gradient(90deg, #fff 0%, #000 100%)" });
  });
});

describe("read (GET .../landing-page)", () => {
  test("404 before a page exists", async () => {
    const wl = await waitlist();
    const r = await wl.get();
    expect(r.status).toBe(404);
    expect(r.body).toEqual(notFound);
  });

  test("after create, returns every Landing page field, and no ai key on a standard page", async () => {
    const wl = await withPage({
      headline: "Launching soon",
      description: "A better way to wait.",
      button_text: "Count me in",
      collect_name: true,
      collect_phone: false,
      background: { type: "color", value: "#12ab3f" },
      theme: "dark",
      seo: { title: "Soon", description: "Soon, really", keywords: ["launch", "beta"], og_title: "OG soon", og_description: "OG description" },
    });
    const r = await wl.get();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const lp = r.body.data.landing_page;
    expect(lp).toEqual({
      id: expect.any(String),
      page_type: "standard",
      status: "draft",
      headline: "Launching soon",
      description: "A better way to wait.",
      button_text: "Count me in",
      collect_name: true,
      collect_phone: false,
      background: { type: "color", value: "#12ab3f" },
      theme: "dark",
      seo: { title: "Soon", description: "Soon, really", keywords: ["launch", "beta"], og_title: "OG soon", og_description: "OG description" },
      hosted_page_url: null,
      has_unpublished_changes: false,
      analytics: { views: 0, sign_ups: 0 },
    });
    expect("ai" in lp).toBe(false);
  });

  test("defaults: button_text Join the waitlist, no name or phone input, light theme, empty seo, no background", async () => {
    const wl = await withPage({ headline: "Launching soon" });
    expect((await wl.get()).body.data.landing_page).toEqual({
      id: expect.any(String),
      page_type: "standard",
      status: "draft",
      headline: "Launching soon",
      description: null,
      button_text: "Join the waitlist",
      collect_name: false,
      collect_phone: false,
      background: null,
      theme: "light",
      seo: { title: null, description: null, keywords: [], og_title: null, og_description: null },
      hosted_page_url: null,
      has_unpublished_changes: false,
      analytics: { views: 0, sign_ups: 0 },
    });
  });
});

describe("update (PATCH .../landing-page)", () => {
  test("an empty body, an unknown key and an over-cap value are 400 and change nothing", async () => {
    const wl = await withPage({ headline: "Launching soon" });
    const before = (await wl.get()).body.data.landing_page;
    const empty = await wl.patch({});
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(badRequest);
    const unknown = await wl.patch({ headline: "Changed", colour: "red" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("colour");
    for (const k of ALLOWED_KEYS) expect(unknown.body.message).toContain(k);
    for (const body of [{ headline: "ab" }, { description: "d".repeat(1001) }, { seo: { title: "<b>x</b>" } }, { theme: "blue" }]) {
      const r = await wl.patch(body);
      expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    expect((await wl.get()).body.data.landing_page).toEqual(before);
  });

  test("PATCH without a page is 404", async () => {
    const wl = await waitlist();
    const r = await wl.patch({ headline: "Launching soon" });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(notFound);
  });

  test("a subset update changes only those fields, answers the GET shape, and seo merges member by member", async () => {
    const wl = await withPage({
      headline: "Launching soon",
      description: "Old description",
      button_text: "Count me in",
      theme: "dark",
      seo: { title: "Old title", keywords: ["a", "b"] },
    });
    const before = (await wl.get()).body.data.landing_page;
    const r = await wl.patch({ description: "New description", collect_phone: true, seo: { description: "SEO description" } });
    expect(r.status, r.text).toBe(200);
    const expected = {
      ...before,
      description: "New description",
      collect_phone: true,
      seo: { title: "Old title", description: "SEO description", keywords: ["a", "b"], og_title: null, og_description: null },
    };
    expect(r.body.data.landing_page).toEqual(expected);
    expect((await wl.get()).body.data.landing_page).toEqual(expected);
    const again = await wl.patch({ seo: { keywords: ["c"] } });
    expect(again.body.data.landing_page.seo).toEqual({ title: "Old title", description: "SEO description", keywords: ["c"], og_title: null, og_description: null });
    expect(again.body.data.landing_page.headline).toBe("Launching soon");
    expect(again.body.data.landing_page.button_text).toBe("Count me in");
  });
});

describe("publish (POST .../landing-page/publish) and the hosted page", () => {
  test("publish goes live at BASE_URL/p/{slug}; PATCH changes the served page at once; unpublish takes it offline; publish again", async () => {
    const wl = await withPage({ headline: "Fish & Chips < \"Soon\"" });
    const url = `${BASE_URL}/p/${wl.w.slug}`;
    // issue 16: while no page is published, a plain sign-up form (never the draft)
    const draft = await page(`/p/${wl.w.slug}`);
    expect(draft.status).toBe(200);
    expect(draft.headers.get("content-type")).toContain("text/html");
    expect(draft.html).toContain(`<form method="post" action="/s/${wl.w.key}">`);
    expect(draft.html).not.toContain("Fish &amp; Chips");

    const p = await wl.publish();
    expect(p.status, p.text).toBe(200);
    expect(p.body).toEqual({ success: true, data: { status: "published", hosted_page_url: url, notes: expect.any(String) } });
    const got = (await wl.get()).body.data.landing_page;
    expect(got.status).toBe("published");
    expect(got.hosted_page_url).toBe(url);

    const live = await page(`/p/${wl.w.slug}`);
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toContain("text/html");
    expect(live.html).toContain("<h1>Fish &amp; Chips &lt; &quot;Soon&quot;</h1>");
    expect(live.html).not.toContain('Fish & Chips < "Soon"');

    const patched = await wl.patch({ headline: "Fresh headline" });
    expect(patched.status).toBe(200);
    expect(patched.body.data.landing_page.status).toBe("published");
    const changed = await page(`/p/${wl.w.slug}`);
    expect(changed.status).toBe(200);
    expect(changed.html).toContain("<h1>Fresh headline</h1>");
    expect(changed.html).not.toContain("Fish &amp; Chips");

    const u = await wl.publish({ unpublish: true });
    expect(u.status).toBe(200);
    expect(u.body.data.status).toBe("unpublished");
    expect((await wl.get()).body.data.landing_page.status).toBe("unpublished");
    const gone = await page(`/p/${wl.w.slug}`);
    expect(gone.status).toBe(200);
    expect(gone.html).toContain(`<form method="post" action="/s/${wl.w.key}">`);
    expect(gone.headers.get("content-type")).toContain("text/html");
    expect(gone.html).not.toContain("Fresh headline");

    const back = await wl.publish({});
    expect(back.status).toBe(200);
    expect(back.body.data).toEqual({ status: "published", hosted_page_url: url, notes: expect.any(String) });
    expect((await wl.get()).body.data.landing_page.status).toBe("published");
    expect((await page(`/p/${wl.w.slug}`)).html).toContain("<h1>Fresh headline</h1>");
  });

  test("publish on a waitlist without a page is 404", async () => {
    const wl = await waitlist();
    const r = await wl.publish();
    expect(r.status).toBe(404);
    expect(r.body).toEqual(notFound);
  });

  test("with a custom domain, hosted_page_url is BASE_URL's scheme + the domain and / on that Host serves the page; an unknown Host is 404", async () => {
    const wl = await withPage({ headline: "Custom domain launch" });
    await wl.settings({ custom_domain: "launch.example.test" });
    const p = await wl.publish();
    expect(p.status).toBe(200);
    expect(p.body.data.hosted_page_url).toBe("http://launch.example.test");
    expect((await wl.get()).body.data.landing_page.hosted_page_url).toBe("http://launch.example.test");

    const onDomain = await page("/", { host: "launch.example.test" });
    expect(onDomain.status).toBe(200);
    expect(onDomain.html).toContain("<h1>Custom domain launch</h1>");
    const unknown = await page("/", { host: `nobody-${uniq()}.example.test` });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("text/html");
    expect(unknown.html).not.toContain("Custom domain launch");
  });

  test("the page carries SEO and Open Graph meta from seo, escaped", async () => {
    const wl = await published({
      headline: "Launching soon",
      description: "Page description",
      seo: { title: 'Tom & "Jerry"', description: "SEO description" },
    });
    const { html } = await page(`/p/${wl.w.slug}`);
    expect(html).toContain("<title>Tom &amp; &quot;Jerry&quot;</title>");
    expect(html).toContain('<meta name="description" content="SEO description">');
    expect(html).toContain('<meta property="og:title" content="Tom &amp; &quot;Jerry&quot;">');
    expect(html).toContain('<meta property="og:description" content="SEO description">');

    await wl.patch({ seo: { og_title: "Share title", og_description: "Share description" } });
    const again = (await page(`/p/${wl.w.slug}`)).html;
    expect(again).toContain('<meta property="og:title" content="Share title">');
    expect(again).toContain('<meta property="og:description" content="Share description">');
    expect(again).toContain('<meta name="description" content="SEO description">');
  });

  test("the form posts to /s/{waitlistKey} with a required email input, a honeypot, and name/phone inputs only when collected", async () => {
    const wl = await published({ headline: "Launching soon" });
    const plain = (await page(`/p/${wl.w.slug}`)).html;
    const form = tag(plain, /<form\b[^>]*>/);
    expect(form).toMatch(/\bmethod="post"/i);
    expect(form).toContain(`action="/s/${wl.w.key}"`);
    const email = inputNamed(plain, "email");
    expect(email).toContain('type="email"');
    expect(email).toMatch(/\brequired\b/);
    expect(inputNamed(plain, "website")).not.toBeNull();
    expect(inputNamed(plain, "website")).not.toMatch(/\brequired\b/);
    expect(inputNamed(plain, "name")).toBeNull();
    expect(inputNamed(plain, "phone")).toBeNull();
    expect(plain).toMatch(/<button\b[^>]*type="submit"[^>]*>Join the waitlist<\/button>/);

    await wl.patch({ collect_name: true });
    const withName = (await page(`/p/${wl.w.slug}`)).html;
    expect(inputNamed(withName, "name")).not.toBeNull();
    expect(inputNamed(withName, "phone")).toBeNull();

    await wl.patch({ collect_name: false, collect_phone: true });
    const withPhone = (await page(`/p/${wl.w.slug}`)).html;
    expect(inputNamed(withPhone, "name")).toBeNull();
    expect(inputNamed(withPhone, "phone")).not.toBeNull();
  });

  test("?ref= is carried in a hidden input; a ref with quotes or HTML is never reflected unescaped", async () => {
    const wl = await published({ headline: "Launching soon" });
    const ok = (await page(`/p/${wl.w.slug}?ref=ABC123`)).html;
    expect(ok).toContain('<input type="hidden" name="ref" value="ABC123">');
    const evil = `"><script>alert(1)</script>`;
    const bad = (await page(`/p/${wl.w.slug}?ref=${encodeURIComponent(evil)}`)).html;
    expect(bad).not.toContain(evil);
    expect(bad).not.toContain("<script");
    expect(bad).not.toContain('value="">');
    const quote = (await page(`/p/${wl.w.slug}?ref=${encodeURIComponent(`AB" onfocus="x`)}`)).html;
    expect(quote).not.toContain('" onfocus="x');
  });

  test("the page's CSP denies by default and allows its inline style by sha256 hash; no http(s) URL in src/href but the canonical link", async () => {
    const wl = await published({ headline: "Launching soon", background: { type: "gradient", value: "linear-gradient(90deg, #FFF 0%, #000 100%)" } });
    const res = await page(`/p/${wl.w.slug}`);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/'sha256-[A-Za-z0-9+/]+=*'/);
    const style = res.html.match(/<style>([\s\S]*?)<\/style>/)?.[1];
    expect(style).toBeDefined();
    expect(style).toContain("linear-gradient(90deg, #fff 0%, #000 100%)");
    expect(csp).toContain(`'sha256-${createHash("sha256").update(style!).digest("base64")}'`);

    const url = `${BASE_URL}/p/${wl.w.slug}`;
    expect(res.html).toContain(`<link rel="canonical" href="${url}">`);
    expect(res.html).toContain(`<meta property="og:url" content="${url}">`);
    const absolute = [...res.html.matchAll(/<[^>]*\b(?:src|href)\s*=\s*["']?https?:[^>]*>/gi)].map((m) => m[0]);
    expect(absolute).toEqual([`<link rel="canonical" href="${url}">`]);
  });
});

describe("views counted by the hosted page", () => {
  test("each GET /p/{slug} from a new User-Agent counts one view; the same User-Agent again does not", async () => {
    const wl = await published({ headline: "Launching soon" });
    const views = async () => ({ page: (await wl.get()).body.data.landing_page.analytics.views as number, stats: (await wl.stats()).views_total as number });
    expect(await views()).toEqual({ page: 0, stats: 0 });
    const ua = (n: string) => ({ "user-agent": `landing-test-${n}-${uniq()}` });
    const a = ua("a");
    expect((await page(`/p/${wl.w.slug}`, a)).status).toBe(200);
    await until(async () => (await views()).stats === 1, 5_000, "first view");
    expect(await views()).toEqual({ page: 1, stats: 1 });

    expect((await page(`/p/${wl.w.slug}`, a)).status).toBe(200);
    expect((await page(`/p/${wl.w.slug}`, ua("b"))).status).toBe(200);
    await until(async () => (await views()).stats >= 2, 5_000, "second visitor's view");
    expect((await page(`/p/${wl.w.slug}`, ua("c"))).status).toBe(200);
    await until(async () => (await views()).stats >= 3, 5_000, "third visitor's view");
    expect(await views()).toEqual({ page: 3, stats: 3 });
  });
});

describe("POST /api/v1/waitlists with landing_page", () => {
  test("provisions a draft page with that headline", async () => {
    const wl = await waitlist({ body: { landing_page: { headline: "Launching soon" } } });
    const r = await wl.get();
    expect(r.status).toBe(200);
    expect(r.body.data.landing_page).toMatchObject({ page_type: "standard", status: "draft", headline: "Launching soon", button_text: "Join the waitlist", hosted_page_url: null });
  });

  test("an invalid landing_page is 400 and creates no waitlist", async () => {
    const { key } = await s.account("business");
    const total = async () => (await s.request("GET", "/api/v1/waitlists", { key })).body.data.total as number;
    expect(await total()).toBe(0);
    for (const landing_page of [{ headline: "ab" }, { headline: "<b>Hi</b> there" }, {}, { headline: "Launching soon", theme: "blue" }]) {
      const name = `Landing ${uniq()} ${uniq()}`;
      const r = await s.request("POST", "/api/v1/waitlists", { key, body: { name, landing_page } });
      expect(r.status, JSON.stringify(landing_page)).toBe(400);
      expect(r.body).toEqual(badRequest);
      expect(await total()).toBe(0);
      // and the name is still free
      const again = await s.request("POST", "/api/v1/waitlists", { key: biz, body: { name } });
      expect(again.status).toBe(201);
    }
  });
});

describe("LANDING_PAGE_API=off", () => {
  test("every landing-page endpoint answers 503; a bad key still gets 401", async () => {
    const { key } = await off.account("business");
    const wl = await waitlist({ server: off, key });
    const calls: [string, string, unknown][] = [
      ["POST", wl.path, { headline: "Launching soon" }],
      ["GET", wl.path, undefined],
      ["PATCH", wl.path, { headline: "Launching soon" }],
      ["POST", `${wl.path}/publish`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const r = await off.request(method, path, { key, body });
      expect(r.status, `${method} ${path}`).toBe(503);
      expect(r.body).toEqual({ statusCode: 503, error: "Service Unavailable", message: expect.any(String) });
      const bad = await off.request(method, path, { key: `wl_acct_${uniq()}nope`, body });
      expect(bad.status, `${method} ${path}`).toBe(401);
      expect(bad.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid API key" });
    }
  });
});

describe("rate limits", () => {
  async function limits(plan: string) {
    const { key } = await limited.account(plan);
    const wl = await waitlist({ server: limited, key });
    const create = await wl.create({ headline: "Launching soon" });
    const update = await wl.patch({ description: "Now with a description" });
    const get = await wl.get();
    const publish = await wl.publish();
    for (const r of [create, update, get, publish]) expect(r.status, r.text).toBeLessThan(300);
    return { wl, limit: [create, update, get, publish].map((r) => r.headers.get("x-ratelimit-limit")) };
  }

  test("X-RateLimit-Limit is create 5, update 5, get 30, publish 3 on Free and 10, 10, 60, 5 on Growth; the 4th publish in a minute on Free is 429", async () => {
    // keep the burst inside one fixed one-minute window
    await until(() => Date.now() % 60_000 < 54_000, 7_000, "the start of a rate-limit window");
    const free = await limits("free");
    const growth = await limits("growth");
    expect(free.limit).toEqual(["5", "5", "30", "3"]);
    expect(growth.limit).toEqual(["10", "10", "60", "5"]);

    const second = await free.wl.publish();
    const third = await free.wl.publish();
    expect([second.status, third.status]).toEqual([200, 200]);
    expect(third.headers.get("x-ratelimit-remaining")).toBe("0");
    const fourth = await free.wl.publish();
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("x-ratelimit-limit")).toBe("3");
    expect(fourth.body).toEqual({ statusCode: 429, error: "Too Many Requests", message: expect.any(String), data: { retry_after: expect.any(Number) } });
    expect(fourth.body.data.retry_after).toBeGreaterThanOrEqual(1);
    expect(fourth.body.data.retry_after).toBeLessThanOrEqual(60);
  });
});
