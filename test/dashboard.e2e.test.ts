// DESIGN §9: the dashboard is served by the binary under a strict CSP with no third-party request, and
// the one API extension it needs for its live preview (POST .../landing-page/preview). Over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { startServer, type TestServer } from "./support/server";

const BASE_URL = "http://wl.dash.example";
let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({ env: { BASE_URL, RATE_LIMITS: "off" } });
  key = (await s.account("growth")).key;
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const MODULES = ["app.js", "account.js", "api.js", "dom.js", "chart.js", "growth.js", "nav.js", "subscribers-table.js", "view-waitlists.js", "view-overview.js", "view-settings.js", "view-page.js", "view-broadcasts.js", "email-frame.js", "view-keys.js", "view-webhooks.js", "view-audit.js", "view-team.js"];

describe("GET /dashboard", () => {
  test("the shell is HTML with a strict CSP, nosniff, no-referrer and no third-party URL; it loads only its own stylesheet and module", async () => {
    for (const path of ["/dashboard", "/dashboard/"]) {
      const r = await s.request("GET", path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(r.headers.get("content-security-policy")).toBe(CSP);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
      expect(r.text).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(r.text).toContain('<script type="module" src="/dashboard/assets/app.js"></script>');
      expect(r.text).toContain('<link rel="stylesheet" href="/dashboard/assets/dashboard.css">');
    }
  });

  test("every module and the stylesheet are served with their types; modules import only each other; an unknown asset is 404", async () => {
    for (const file of MODULES) {
      const r = await s.request("GET", `/dashboard/assets/${file}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      for (const [, target] of r.text.matchAll(/from "([^"]+)"/g)) expect(MODULES).toContain(target.replace(/^\.\//, ""));
      // data reaches the page as text, never as markup
      expect(r.text).not.toMatch(/\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML\(|document\.write\(/);
    }
    const css = await s.request("GET", "/dashboard/assets/dashboard.css");
    expect([css.status, css.headers.get("content-type")]).toEqual([200, "text/css; charset=utf-8"]);
    expect(css.text).not.toMatch(/url\(|@import/);
    expect((await s.request("GET", "/dashboard/assets/nope.js")).status).toBe(404);
    // issue 45: the email preview's frame runs only its own script; the email's inline styles and https images apply
    const frame = await s.request("GET", "/dashboard/email-frame");
    expect(frame.status).toBe(200);
    expect(frame.headers.get("content-security-policy")).toBe("default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'");
    expect(frame.text).toContain('<script src="/dashboard/assets/email-frame.js" defer></script>');
    expect((await s.request("GET", "/dashboard/assets/..%2F..%2Fpackage.json")).status).toBe(404);
  });
});

describe("POST .../landing-page/preview (extension)", () => {
  async function waitlist(body: Record<string, unknown> = {}) {
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Preview ${uniq()}`, ...body } })).body.data.waitlist;
    return { w, path: `/api/v1/waitlist/${w.key}/landing-page` };
  }

  test("answers a preview_url under BASE_URL that serves the page with the edits applied, framable by the dashboard only, with a form that cannot submit; nothing is saved", async () => {
    const { w, path } = await waitlist({ landing_page: { headline: "Saved headline", description: "Saved description" } });
    const before = Date.now();
    const r = await s.request("POST", `${path}/preview`, { key, body: { headline: "Unsaved headline", theme: "dark" } });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body.data).sort()).toEqual(["expires_at", "preview_url"]);
    expect(r.body.data.preview_url).toMatch(new RegExp(`^${BASE_URL}/preview/[A-Za-z0-9]{32}$`));
    expect(r.body.data.expires_at).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(r.body.data.expires_at).toBeLessThanOrEqual(Date.now() + 10 * 60_000);

    const page = await s.request("GET", new URL(r.body.data.preview_url).pathname);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Unsaved headline</h1>");
    expect(page.text).toContain("Saved description");
    expect(page.text).toContain('data-theme="dark"');
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("form-action 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(page.headers.get("x-robots-tag")).toBe("noindex");

    const saved = (await s.request("GET", path, { key })).body.data.landing_page;
    expect([saved.headline, saved.theme, saved.status]).toEqual(["Saved headline", "light", "draft"]);
    // issue 16: no published page: the plain sign-up form, neither the draft nor the preview
    const hosted = await s.request("GET", `/p/${w.slug}`);
    expect(hosted.status).toBe(200);
    expect(hosted.text).not.toContain("Saved headline");
    expect(hosted.text).not.toContain("Unsaved headline");
  });

  test("without a page it previews a new draft and creates none; an empty body previews a placeholder", async () => {
    const { path } = await waitlist();
    const r = await s.request("POST", `${path}/preview`, { key, body: { headline: "First idea", collect_name: true } });
    expect(r.status).toBe(200);
    const html = (await s.request("GET", new URL(r.body.data.preview_url).pathname)).text;
    expect(html).toContain("<h1>First idea</h1>");
    expect(html).toContain('name="name"');
    expect((await s.request("GET", path, { key })).status).toBe(404);
    const empty = await s.request("POST", `${path}/preview`, { key, body: {} });
    expect(empty.status).toBe(200);
    expect((await s.request("GET", new URL(empty.body.data.preview_url).pathname)).text).toContain("<h1>Your headline</h1>");
  });

  test("fields are checked like PATCH: an unknown key, a field over its cap, or HTML is 400 naming it; text is escaped in the page", async () => {
    const { path } = await waitlist();
    const cases: [unknown, string][] = [
      [{ title: "x" }, "title"],
      [{ headline: "x".repeat(121) }, "headline"],
      [{ button_text: "x".repeat(41) }, "button_text"],
      [{ headline: "<b>bold</b> claim" }, "headline"],
      [{ background: { type: "image", value: "x.png" } }, "background"],
    ];
    for (const [body, field] of cases) {
      const r = await s.request("POST", `${path}/preview`, { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringContaining(field) });
    }
    const r = await s.request("POST", `${path}/preview`, { key, body: { headline: "Tom & Jerry's \"best\" page" } });
    const html = (await s.request("GET", new URL(r.body.data.preview_url).pathname)).text;
    expect(html).toContain("<h1>Tom &amp; Jerry&#39;s &quot;best&quot; page</h1>");
  });

  test("an unknown or expired preview is a friendly 404 page; a missing key is 401", async () => {
    const { path } = await waitlist();
    expect((await s.request("POST", `${path}/preview`, { body: {} })).status).toBe(401);
    const unknown = await s.request("GET", "/preview/not-a-token");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("Preview expired");
    const r = await s.request("POST", `${path}/preview`, { key, body: { headline: "Soon gone" } });
    const token = r.body.data.preview_url.split("/").pop();
    const db = await openDatabase({ url: s.dbUrl });
    await db.exec(sql`UPDATE landing_previews SET expires_at = ${Date.now() - 1} WHERE token = ${token}`);
    await db.close();
    expect((await s.request("GET", `/preview/${token}`)).status).toBe(404);
  });

  test("is in the OpenAPI document", async () => {
    const doc = (await s.request("GET", "/swagger/json")).body;
    expect(doc.paths["/api/v1/waitlist/{waitlistKey}/landing-page/preview"].post.summary).toBe("Preview unsaved changes (extension)");
  });
});
