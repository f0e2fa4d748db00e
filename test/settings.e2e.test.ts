// DESIGN §4 settings extension: GET|PATCH /api/v1/waitlist/{waitlistKey}/settings over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
let blocking: TestServer;
beforeAll(async () => {
  [s, blocking] = await Promise.all([startServer({ env: { RATE_LIMITS: "off" } }), startServer({ env: { RATE_LIMITS: "off", WEBHOOK_BLOCK_PRIVATE: "true" } })]);
});
afterAll(() => Promise.all([s.stop(), blocking.stop()]));

const uniq = () => Math.random().toString(36).slice(2, 8);

async function waitlist(server = s, body: Record<string, unknown> = {}) {
  const { key } = await server.account();
  const r = await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Settings ${uniq()}`, ...body } });
  expect(r.status).toBe(201);
  return { key, w: r.body.data.waitlist };
}

describe("settings", () => {
  test("GET returns every DESIGN field with its default, and a generated signing secret", async () => {
    const { key, w } = await waitlist(s, { category: "Dev tools", referral_rewards: { enabled: true, referral_points: 40 }, validate_emails: false });
    const r = await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("60");
    const st = r.body.data.settings;
    expect(st).toEqual({
      key: w.key,
      slug: w.slug,
      name: w.name,
      category: "Dev tools",
      description: null,
      double_opt_in: false,
      position_offset: 0,
      allowed_domains: [],
      referral_rewards: { enabled: true, signup_points: 50, referral_points: 40 },
      validate_emails: false,
      welcome_email: { enabled: false, subject: expect.any(String), body: expect.any(String) },
      confirmation_email: { subject: expect.any(String), body: expect.any(String) },
      webhook: { url: null, enabled: false, signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{32,}$/) },
      custom_domain: null,
      signup_url: null,
      // issue 11 extension
      milestones: [],
      milestone_email: { subject: expect.stringContaining("{{waitlist_name}}"), body: expect.stringContaining("{{reward}}") },
      leaderboard: false,
      invitation_email: { subject: expect.any(String), body: expect.stringContaining("{{invite_link}}") },
      invite_expiry_days: 14,
      invite_redirect_url: null,
      // issue 16
      captcha: "off",
      // issue 45: the look of every email
      email_template: { sender_name: null, logo_url: null, color: "#111827", footer: null },
      // issue 46: the form's own questions, the share image
      form_fields: [],
      og_image_url: null,
      retention_days: null,
      // issue 43: read-only, no page yet
      landing_page_status: null,
    });
  });

  test("PATCH merges objects one level deep: omitted members keep their values", async () => {
    const { key, w } = await waitlist();
    const first = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, {
      key,
      body: { referral_rewards: { enabled: true, signup_points: 10 }, welcome_email: { enabled: true, subject: "Hi there" }, webhook: { url: "http://127.0.0.1:9/hook", enabled: true } },
    });
    expect(first.status).toBe(200);
    const before = first.body.data.settings;
    const r = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, {
      key,
      body: { referral_rewards: { referral_points: 5 }, welcome_email: { body: "Welcome {{name}}" }, webhook: { enabled: false }, double_opt_in: true, position_offset: 1000 },
    });
    expect(r.status).toBe(200);
    const st = r.body.data.settings;
    expect(st.referral_rewards).toEqual({ enabled: true, signup_points: 10, referral_points: 5 });
    expect(st.welcome_email).toEqual({ enabled: true, subject: "Hi there", body: "Welcome {{name}}" });
    expect(st.webhook).toEqual({ url: "http://127.0.0.1:9/hook", enabled: false, signing_secret: before.webhook.signing_secret });
    expect(st.double_opt_in).toBe(true);
    expect(st.position_offset).toBe(1000);
    expect(st.confirmation_email).toEqual(before.confirmation_email);
    const again = await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key });
    expect(again.body.data.settings).toEqual(st);
  });

  test("landing_page_status says whether there is a page, and which: null, draft, published; read-only", async () => {
    const { key } = await s.account("business");
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Page status ${Date.now()}` } })).body.data.waitlist;
    const status = async () => (await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key })).body.data.settings.landing_page_status;
    expect(await status()).toBeNull();
    expect((await s.request("GET", `/api/v1/waitlist/${w.key}/landing-page`, { key })).status).toBe(404);
    expect((await s.request("POST", `/api/v1/waitlist/${w.key}/landing-page`, { key, body: { headline: "Soon here" } })).status).toBe(201);
    expect(await status()).toBe("draft");
    expect((await s.request("POST", `/api/v1/waitlist/${w.key}/landing-page/publish`, { key, body: {} })).status).toBe(200);
    expect(await status()).toBe("published");
    const patched = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { leaderboard: true } });
    expect(patched.body.data.settings.landing_page_status).toBe("published");
    const refused = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { landing_page_status: "draft" } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("landing_page_status");
    expect(await status()).toBe("published");
  });

  test("allowed_domains and custom_domain are stored as lowercase host names", async () => {
    const { key, w } = await waitlist();
    const r = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, {
      key,
      body: { allowed_domains: ["Example.COM", "https://www.example.com/signup", "*.preview.example.dev", "example.com"], custom_domain: "Waitlist.Example.com" },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.settings.allowed_domains).toEqual(["example.com", "www.example.com", "*.preview.example.dev"]);
    expect(r.body.data.settings.custom_domain).toBe("waitlist.example.com");
    const cleared = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { custom_domain: null, allowed_domains: [] } });
    expect(cleared.body.data.settings.custom_domain).toBeNull();
    expect(cleared.body.data.settings.allowed_domains).toEqual([]);
  });

  test("a custom domain or name used by another waitlist is 409 and changes nothing", async () => {
    const a = await waitlist();
    const b = await waitlist();
    const domain = `${uniq()}.example.org`;
    expect((await s.request("PATCH", `/api/v1/waitlist/${a.w.key}/settings`, { key: a.key, body: { custom_domain: domain } })).status).toBe(200);
    const r = await s.request("PATCH", `/api/v1/waitlist/${b.w.key}/settings`, { key: b.key, body: { custom_domain: domain, position_offset: 7 } });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ statusCode: 409, error: "Conflict", message: expect.stringContaining("custom_domain") });
    const name = await s.request("PATCH", `/api/v1/waitlist/${b.w.key}/settings`, { key: b.key, body: { name: a.w.name.toLowerCase() } });
    expect(name.status).toBe(409);
    const after = (await s.request("GET", `/api/v1/waitlist/${b.w.key}/settings`, { key: b.key })).body.data.settings;
    expect(after.position_offset).toBe(0);
    expect(after.custom_domain).toBeNull();
    expect(after.name).toBe(b.w.name);
  });

  test("invalid values are 400 naming the field, and change nothing", async () => {
    const { key, w } = await waitlist();
    const before = (await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key })).body.data.settings;
    const cases: [unknown, string][] = [
      [{}, "at least one"],
      [{ position_offset: -1 }, "position_offset"],
      [{ position_offset: 1.5 }, "position_offset"],
      [{ double_opt_in: "yes" }, "double_opt_in"],
      [{ allowed_domains: ["not a host"] }, "allowed_domains"],
      [{ allowed_domains: "example.com" }, "allowed_domains"],
      [{ custom_domain: "bad_domain!" }, "custom_domain"],
      [{ webhook: { url: "ftp://example.com/x" } }, "webhook.url"],
      [{ webhook: { enabled: true } }, "webhook.url"],
      [{ welcome_email: { subject: "" } }, "welcome_email.subject"],
      [{ welcome_email: { subject: "   " } }, "welcome_email.subject"],
      [{ confirmation_email: { body: "x".repeat(20_001) } }, "confirmation_email.body"],
      [{ name: "  " }, "name"],
      [{ signing_secret: "mine" }, "signing_secret"],
      [{ webhook: { signing_secret: "mine" } }, "signing_secret"],
      [{ double_opt_in: true, referral_rewards: { signup_points: -5 } }, "referral_rewards.signup_points"],
    ];
    for (const [body, field] of cases) {
      const r = await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("Bad Request");
      expect(r.body.message, JSON.stringify(body)).toContain(field);
    }
    const after = (await s.request("GET", `/api/v1/waitlist/${w.key}/settings`, { key })).body.data.settings;
    expect(after).toEqual(before);
  });

  test("WEBHOOK_BLOCK_PRIVATE=true refuses loopback and private webhook URLs; public ones pass", async () => {
    const { key, w } = await waitlist(blocking);
    for (const url of ["http://127.0.0.1:8080/x", "http://localhost/x", "http://10.1.2.3/x", "http://192.168.1.1/x", "http://[::1]/x", "http://172.20.0.1/x"]) {
      const r = await blocking.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { webhook: { url } } });
      expect(r.status, url).toBe(400);
      expect(r.body.message).toContain("webhook.url");
    }
    const ok = await blocking.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { webhook: { url: "https://hooks.example.com/in" } } });
    expect(ok.status).toBe(200);
    // and without the setting, loopback is fine (self-hosters receive on the same host)
    const local = await waitlist();
    const r = await s.request("PATCH", `/api/v1/waitlist/${local.w.key}/settings`, { key: local.key, body: { webhook: { url: "http://localhost:4000/hook", enabled: true } } });
    expect(r.status).toBe(200);
  });

  test("another account's waitlist and an unknown waitlist key are 401 Invalid waitlist key", async () => {
    const mine = await waitlist();
    const theirs = await waitlist();
    for (const path of [`/api/v1/waitlist/${theirs.w.key}/settings`, `/api/v1/waitlist/nope${uniq()}/settings`]) {
      const r = await s.request("GET", path, { key: mine.key });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ statusCode: 401, error: "Unauthorized", message: "Invalid waitlist key" });
      const p = await s.request("PATCH", path, { key: mine.key, body: { position_offset: 3 } });
      expect(p.status).toBe(401);
    }
    const untouched = await s.request("GET", `/api/v1/waitlist/${theirs.w.key}/settings`, { key: theirs.key });
    expect(untouched.body.data.settings.position_offset).toBe(0);
  });
});
