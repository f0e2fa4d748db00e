// Double opt-in over real SMTP, welcome emails, and signed webhooks from the durable outbox
// (spec: Subscriber state table, Events; DESIGN §4 Events).
import { Webhook as StandardWebhook } from "standardwebhooks";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { EVENT_TYPES } from "../src/outbox/events";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url, MAIL_FROM: "Launch <hello@launch.example>" } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const hmac = (secret: string, raw: string) => `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;

const query = (server: TestServer, q: SQL) => server.query(q);

async function waitlist(settings: Record<string, unknown> = {}, server = s, receiver = hooks) {
  const { key } = await server.account();
  const created = await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Events ${uniq()}`, referral_rewards: { enabled: true } } });
  const w = created.body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const patched = await server.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: receiver.url, enabled: true }, ...settings } });
  expect(patched.status).toBe(200);
  return { key, w, path, secret: patched.body.data.settings.webhook.signing_secret as string };
}

const eventsFor = (waitlistKey: string, type?: string) => hooks.deliveries.filter((d) => d.body?.waitlist?.key === waitlistKey && (!type || d.body.type === type));
const mailTo = (address: string, subject?: RegExp) => smtp.messages.filter((m) => m.to && JSON.stringify(m.to).includes(address) && (!subject || subject.test(m.subject ?? "")));

/** Follows a link from an email against the test server (BASE_URL is localhost:<port>). */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, s.url);

describe("double opt-in", () => {
  test("sign-up is pending until the emailed link is followed; then it is ranked, welcomed and announced once", async () => {
    const { key, w, path, secret } = await waitlist({
      double_opt_in: true,
      welcome_email: { enabled: true, subject: "Welcome to {{waitlist_name}}", body: "You are #{{inflated_position}}. Share {{referral_link}}" },
      confirmation_email: { subject: "Confirm {{waitlist_name}}", body: "Hi {{name}}, confirm here: {{confirm_link}}" },
      position_offset: 100,
    });
    const email = `pending-${uniq()}@example.com`;
    const r = await s.request("POST", `${path}/sign-up`, { key, body: { email, name: "Ada <b>" } });
    expect(r.body).toEqual({ success: true, is_new_sign_up: true, is_pending_confirmation: true, message: expect.any(String), redirect_url: `${s.url.replace("127.0.0.1", "localhost")}/pending/${w.key}` });

    const confirmMail = (await until(() => mailTo(email, /^Confirm /)[0], 5_000, "confirmation email"))!;
    expect(confirmMail.subject).toBe(`Confirm ${w.name}`);
    expect(confirmMail.from?.text).toBe('"Launch" <hello@launch.example>');
    const link = confirmMail.text!.match(/https?:\/\/\S+\/confirm\/[A-Za-z0-9]+/)![0];
    expect(confirmMail.text).toContain("Hi Ada <b>, confirm here:");
    // the HTML part escapes the subscriber's name and links the URL
    expect(confirmMail.html).toContain("Hi Ada &lt;b&gt;, confirm here:");
    expect(confirmMail.html).toContain(`<a href="${link}">`);

    // pending: counted nowhere, no position
    expect((await s.request("GET", `${path}/stats`, { key })).body.data.subscribers_total).toBe(0);
    const pending = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(pending.position).toBeUndefined();
    expect(pending.sign_up_token).toBeUndefined();
    const again = await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    expect(again.body).toEqual({ success: true, is_new_sign_up: false, is_pending_confirmation: true, message: expect.any(String), redirect_url: expect.stringMatching(/\/pending\//) });

    // the link's page (GET) changes nothing; its button POSTs to the same URL (issue 16)
    const follow = await fetch(local(link), { method: "POST", redirect: "manual" });
    expect(follow.status).toBe(303);
    const confirmed = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(follow.headers.get("location")).toBe(confirmed.thank_you_url);
    expect(confirmed.position).toBe(1);
    expect(confirmed.inflated_position).toBe(101);
    expect(confirmed.deliverability).toBe("confirmed");
    expect((await s.request("GET", `${path}/stats`, { key })).body.data.subscribers_total).toBe(1);

    const welcome = (await until(() => mailTo(email, /^Welcome /)[0], 5_000, "welcome email"))!;
    expect(welcome.text).toContain("You are #101.");
    expect(welcome.text).toContain(`/p/${w.slug}?ref=${confirmed.referral_code}`);

    // a second POST only redirects: no second welcome, no second event
    const second = await fetch(local(link), { method: "POST", redirect: "manual" });
    expect(second.status).toBe(303);
    expect(second.headers.get("location")).toBe(confirmed.thank_you_url);
    await until(() => eventsFor(w.key, "subscriber.confirmed").length === 1, 5_000, "confirmed event");
    const types = eventsFor(w.key).map((d) => d.body.type);
    expect(types.filter((t) => t === "subscriber.pending")).toHaveLength(1);
    expect(types.filter((t) => t === "subscriber.confirmed")).toHaveLength(1);
    const outbox = await query(s, sql`SELECT topic FROM outbox WHERE subscriber_id = ${confirmed.id} AND kind = 'email' ORDER BY created_at, id`);
    expect(outbox.map((r) => r.topic)).toEqual(["confirmation", "welcome"]);
    const event = eventsFor(w.key, "subscriber.confirmed")[0];
    expect(event.headers["x-webhook-signature"]).toBe(hmac(secret, event.raw));
  });

  test("positions follow confirmation order, and the referrer is credited at confirmation", async () => {
    const { key, w, path } = await waitlist({ double_opt_in: true });
    const [a, b, c] = [`a-${uniq()}@example.com`, `b-${uniq()}@example.com`, `c-${uniq()}@example.com`];
    for (const email of [a, b]) await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    const linkOf = async (email: string) => (await until(() => mailTo(email)[0], 5_000, `email to ${email}`))!.text!.match(/\/confirm\/([A-Za-z0-9]+)/)![0];
    // b confirms first, so b is ahead of a
    await fetch(`${s.url}${await linkOf(b)}`, { method: "POST", redirect: "manual" });
    await fetch(`${s.url}${await linkOf(a)}`, { method: "POST", redirect: "manual" });
    const get = async (email: string) => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect((await get(b)).position).toBe(1);
    expect((await get(a)).position).toBe(2);
    // c is referred by a; a is credited only once c confirms
    await s.request("POST", `${path}/sign-up`, { key, body: { email: c, metadata: { referred_by: (await get(a)).referral_code } } });
    expect((await get(a)).referral_count).toBe(0);
    await fetch(`${s.url}${await linkOf(c)}`, { method: "POST", redirect: "manual" });
    const referrer = await get(a);
    expect(referrer.referral_count).toBe(1);
    expect(referrer.points).toBe(80);
    expect(referrer.position).toBe(1);
    const credited = await until(() => eventsFor(w.key, "referral.credited")[0], 5_000, "referral.credited");
    expect(credited.body.data.referrer.email).toBe(a);
    expect(credited.body.data.referee.email).toBe(c);
  });

  test("without the welcome email enabled, confirming sends none", async () => {
    const { key, path } = await waitlist({ double_opt_in: true, welcome_email: { enabled: false } });
    const email = `nowelcome-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    const link = (await until(() => mailTo(email)[0], 5_000))!.text!.match(/\/confirm\/[A-Za-z0-9]+/)![0];
    expect((await fetch(`${s.url}${link}`, { method: "POST", redirect: "manual" })).status).toBe(303);
    const rows = await query(s, sql`SELECT o.topic FROM outbox o JOIN subscribers x ON x.id = o.subscriber_id WHERE x.email = ${email} AND o.kind = 'email'`);
    expect(rows.map((r) => r.topic)).toEqual(["confirmation"]);
  });

  test("an unknown confirmation link gets a friendly HTML page, not JSON", async () => {
    const r = await fetch(`${s.url}/confirm/doesnotexist123`);
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await r.text()).toContain("not valid");
  });
});

describe("webhooks", () => {
  test("every event type arrives signed over the raw body, with the DESIGN envelope and headers", async () => {
    const { key, w, path, secret } = await waitlist({ welcome_email: { enabled: true } });
    const first = await s.request("POST", `${path}/sign-up`, { key, body: { email: `ev1-${uniq()}@example.com`, name: "First" } });
    const second = await s.request("POST", `${path}/sign-up`, { key, body: { email: `ev2-${uniq()}@example.com`, metadata: { referred_by: first.body.referral_code } } });
    const secondId = (await s.request("GET", `${path}/subscribers?sort_by=date&sort_dir=desc&limit=1`, { key })).body.data.subscribers[0].id;
    await s.request("PUT", `${path}/subscribers/${secondId}`, { key, body: { name: "Renamed" } });
    const before = (await s.request("GET", `${path}/subscribers/${secondId}`, { key })).body.data.subscriber;
    await s.request("DELETE", `${path}/subscribers/${secondId}`, { key });
    expect(second.status).toBe(200);

    await until(() => eventsFor(w.key).length >= 5, 5_000, "five events");
    const byType = Object.fromEntries(eventsFor(w.key).map((d) => [d.body.type, d]));
    expect(Object.keys(byType).sort()).toEqual(["referral.credited", "subscriber.created", "subscriber.deleted", "subscriber.updated"]);
    expect(eventsFor(w.key, "subscriber.created")).toHaveLength(2);
    for (const d of eventsFor(w.key)) {
      expect(d.headers["content-type"]).toBe("application/json");
      expect(d.headers["x-webhook-signature"]).toBe(hmac(secret, d.raw));
      expect(d.headers["x-webhook-id"]).toBe(d.body.id);
      // issue 49: Standard Webhooks v1 too, verified by the reference library
      expect(d.headers["webhook-id"]).toBe(d.body.id);
      expect(new StandardWebhook(secret).verify(d.raw, d.headers)).toEqual(d.body);
      expect(d.headers["x-webhook-event"]).toBe(d.body.type);
      expect(d.headers["x-webhook-timestamp"]).toBe(String(d.body.created_at));
      expect(d.body.id).toMatch(/^evt_/);
      expect(d.body.waitlist).toEqual({ id: w.id, key: w.key, slug: w.slug, name: w.name });
      expect(Object.keys(d.body).sort()).toEqual(["created_at", "data", "id", "type", "waitlist"]);
    }
    expect(byType["subscriber.updated"].body.data.subscriber.name).toBe("Renamed");
    // deleted carries the subscriber as it was
    expect(byType["subscriber.deleted"].body.data.subscriber).toEqual(before);
    expect(byType["referral.credited"].body.data.referrer.referral_count).toBe(1);
    expect(byType["referral.credited"].body.data.referee.id).toBe(secondId);
    expect(byType["subscriber.created"].body.data.subscriber.position).toBeNumber();
  });

  test("a 500 is retried about 30 s later with the same X-Webhook-Id and body", async () => {
    const { key, w, path } = await waitlist();
    hooks.respondWith(500);
    const failedAt = Date.now();
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `retry-${uniq()}@example.com` } });
    const first = await until(() => eventsFor(w.key)[0], 5_000, "first attempt");
    const [row] = await until(async () => {
      const rows = await query(s, sql`SELECT id, attempts, next_attempt_at, status, last_status FROM outbox WHERE event_id = ${first.body.id}`);
      return rows[0]?.attempts === 1 && rows[0]?.last_status === 500 ? rows : null;
    }, 5_000, "failure recorded");
    expect(row.status).toBe("pending");
    const delay = Number(row.next_attempt_at) - failedAt;
    expect(delay).toBeGreaterThan(27_000 - 1_000);
    expect(delay).toBeLessThan(33_000 + 1_000);
    // bring the retry forward instead of waiting 30 s; the 5 s retry job picks it up
    await query(s, sql`UPDATE outbox SET next_attempt_at = 0 WHERE event_id = ${first.body.id}`);
    const retried = await until(() => eventsFor(w.key)[1], 10_000, "retry");
    expect(retried.headers["x-webhook-id"]).toBe(first.headers["x-webhook-id"]);
    expect(retried.raw).toBe(first.raw);
    await until(async () => (await query(s, sql`SELECT status FROM outbox WHERE event_id = ${first.body.id}`))[0].status === "sent", 5_000, "sent");
  });

  test("an event accepted while the receiver is down survives a restart of the app and is delivered", async () => {
    const receiver = startReceiver();
    const port = receiver.port;
    const server = await startServer({ env: { RATE_LIMITS: "off" } });
    const { key, w, path } = await waitlist({}, server, receiver);
    receiver.stop();
    const signUp = await server.request("POST", `${path}/sign-up`, { key, body: { email: `restart-${uniq()}@example.com` } });
    expect(signUp.status).toBe(200);
    const [row] = await until(async () => {
      const rows = await query(server, sql`SELECT id, event_id, attempts, last_error FROM outbox WHERE waitlist_id = ${w.id} AND attempts = 1 AND last_error IS NOT NULL`);
      return rows.length ? rows : null;
    }, 10_000, "failed first attempt");
    await server.stop({ keep: true });
    const back = startReceiver(port);
    const restarted = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: server.dbUrl });
    try {
      await query(restarted, sql`UPDATE outbox SET next_attempt_at = 0 WHERE id = ${row.id}`);
      // the 5 s retry job's lease (4 s) may still be the stopped instance's: its first tick can be skipped
      const delivered = await until(() => back.deliveries[0], 15_000, "delivery after restart");
      expect(delivered.body.id).toBe(row.event_id);
      expect(delivered.body.type).toBe("subscriber.created");
    } finally {
      await restarted.stop();
      back.stop();
    }
  });

  test("POST .../settings/webhook/test sends a signed test event and reports the receiver's answer; rotate-secret changes the signature (the old one still signs beside it for 24 hours)", async () => {
    const { key, w, path, secret } = await waitlist();
    const r = await s.request("POST", `${path}/settings/webhook/test`, { key });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ delivered: true, status: 200, error: null });
    const test = eventsFor(w.key, "webhook.test")[0];
    expect(test.headers["x-webhook-signature"]).toBe(hmac(secret, test.raw));
    hooks.respondWith(503);
    const failing = await s.request("POST", `${path}/settings/webhook/test`, { key });
    expect(failing.body.data).toMatchObject({ delivered: false, status: 503 });

    const rotated = await s.request("POST", `${path}/settings/webhook/rotate-secret`, { key });
    const fresh = rotated.body.data.signing_secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    expect((await s.request("GET", `${path}/settings`, { key })).body.data.settings.webhook.signing_secret).toBe(fresh);
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `rot-${uniq()}@example.com` } });
    const created = await until(() => eventsFor(w.key, "subscriber.created")[0], 5_000);
    expect(created.headers["x-webhook-signature"]).toBe(hmac(fresh, created.raw));
    expect(new StandardWebhook(fresh).verify(created.raw, created.headers)).toEqual(created.body);
    // issue 49: during the overlap the Standard Webhooks header carries a signature under each secret
    expect(created.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new StandardWebhook(secret).verify(created.raw, created.headers)).toEqual(created.body);
    expect(() => new StandardWebhook(`whsec_${"A".repeat(40)}`).verify(created.raw, created.headers)).toThrow();
  });

  test("with the webhook disabled no delivery is written", async () => {
    const { key, w, path } = await waitlist({ webhook: { enabled: false } });
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `off-${uniq()}@example.com` } });
    expect(await query(s, sql`SELECT count(*) AS n FROM outbox WHERE waitlist_id = ${w.id} AND kind = 'webhook'`)).toEqual([expect.objectContaining({ n: 0 })]);
  });
});

describe("emails without SMTP_URL", () => {
  test("are written to the log with the address masked and kept, then sent once SMTP_URL is set", async () => {
    const quiet = await startServer({ env: { RATE_LIMITS: "off" } });
    const { key, path } = await waitlist({ double_opt_in: true }, quiet);
    const email = `held-${uniq()}@example.com`;
    await quiet.request("POST", `${path}/sign-up`, { key, body: { email } });
    const line = await until(() => quiet.logs.find((l) => l.includes("SMTP_URL is not set")), 5_000, "held email log");
    expect(line).toContain('"to":"h***@example.com"');
    expect(line).not.toContain(email);
    expect(line).toContain("/confirm/");
    const [held] = await query(quiet, sql`SELECT status FROM outbox WHERE kind = 'email'`);
    expect(held.status).toBe("pending");
    await quiet.stop({ keep: true });
    const withSmtp = await startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url }, dbUrl: quiet.dbUrl });
    try {
      await until(() => mailTo(email)[0], 10_000, "held email sent after restart");
    } finally {
      await withSmtp.stop();
    }
  });

  test("a temporary SMTP failure is retried", async () => {
    const { key, path } = await waitlist({ double_opt_in: true });
    smtp.failNext(1);
    const email = `smtpfail-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    const [row] = await until(async () => {
      const rows = await query(s, sql`SELECT o.id FROM outbox o JOIN subscribers x ON x.id = o.subscriber_id WHERE x.email = ${email} AND o.attempts = 1 AND o.last_error IS NOT NULL`);
      return rows.length ? rows : null;
    }, 5_000, "failed send");
    await query(s, sql`UPDATE outbox SET next_attempt_at = 0 WHERE id = ${row.id}`);
    await until(() => mailTo(email)[0], 10_000, "retried email");
  });
});

describe("the document's webhooks section (issue 49 item 5)", () => {
  test("names every event type, and every delivery this file received matches its type's schema", async () => {
    const doc = (await s.request("GET", "/swagger/json")).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES, "webhook.test"].sort());
    const seen = new Set<string>();
    expect(hooks.deliveries.length).toBeGreaterThan(10);
    for (const d of hooks.deliveries) {
      const op = doc.webhooks[d.body.type]?.post;
      expect(op, d.body.type).toBeDefined();
      const validate = ajv.compile(op.requestBody.content["application/json"].schema);
      expect([d.body.type, validate(d.body) ? "matches" : ajv.errorsText(validate.errors)]).toEqual([d.body.type, "matches"]);
      // this file's endpoints are made from the settings' webhook (legacy_signature on): the optional X-Webhook-* too
      for (const p of op.parameters) expect([d.body.type, p.name, d.headers[p.name.toLowerCase()] !== undefined]).toEqual([d.body.type, p.name, true]);
      seen.add(d.body.type);
    }
    // the deliveries of this file cover most types; the rest are checked where they happen (launch day, emails)
    expect(seen.size).toBeGreaterThanOrEqual(5);
  });
});
