// Unsubscribe for real (issue 16 item 3, DESIGN §10, RFC 8058): every email but the confirmation carries
// List-Unsubscribe and List-Unsubscribe-Post and a visible link; a mail client's one-click POST stops
// every later email (welcome, milestone, invitation), once, and the subscriber keeps their place.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import type { ParsedMail } from "mailparser";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

const BASE_URL = "http://wl.unsubscribe.example";
let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { BASE_URL, RATE_LIMITS: "off", SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

const rows = (query: SQL) => s.query(query);

async function waitlist(settings: Record<string, unknown> = {}) {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Unsub ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true }, ...settings } })).status).toBe(200);
  const one = async (email: string) => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  const events = (type: string) => hooks.deliveries.filter((d) => d.body?.type === type && d.body?.waitlist?.key === w.key);
  const signUp = async (email: string, metadata?: Record<string, unknown>) => (await s.request("POST", `${path}/sign-up`, { key, body: { email, metadata } })).body;
  return { key, w, path, one, events, signUp };
}

const mailsTo = (address: string, subject?: RegExp) => smtp.messages.filter((m) => JSON.stringify(m.to).includes(address) && (!subject || subject.test(m.subject ?? "")));
/** A header as sent (unfolded), from the raw header lines: mailparser reshapes List-* headers. */
const header = (m: ParsedMail, name: string) =>
  m.headerLines
    .find((h) => h.key === name)
    ?.line.replace(/\r?\n[ \t]+/g, " ")
    .replace(/^[^:]+:\s*/, "");

/** What an email client does on "unsubscribe" (RFC 8058 §3.1): POST the header's URL, no Origin, no cookie. */
function oneClick(listUnsubscribe: string) {
  const url = listUnsubscribe.match(/^<(https?:\/\/[^>]+)>$/)![1].replace(BASE_URL, s.url);
  return fetch(url, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
}

describe("unsubscribe headers and links in emails", () => {
  test("the welcome email has List-Unsubscribe, List-Unsubscribe-Post and a visible link; the double opt-in confirmation has none", async () => {
    const { one, signUp } = await waitlist({ double_opt_in: true, welcome_email: { enabled: true } });
    const email = `hdr-${uniq()}@example.com`;
    await signUp(email);
    const confirmation = await until(() => mailsTo(email)[0], 5_000, "confirmation email");
    expect(header(confirmation, "list-unsubscribe")).toBeUndefined();
    expect(header(confirmation, "list-unsubscribe-post")).toBeUndefined();
    expect(String(confirmation.text)).not.toContain("/u/");
    const link = String(confirmation.text).match(/\/confirm\/[A-Za-z0-9]+/)![0];
    expect((await fetch(`${s.url}${link}`, { method: "POST", redirect: "manual" })).status).toBe(303);

    const welcome = await until(() => mailsTo(email, /^You're on the /)[0], 5_000, "welcome email");
    const token = (await one(email)).sign_up_token;
    const url = `${BASE_URL}/u/${token}`;
    expect(header(welcome, "list-unsubscribe")).toBe(`<${url}>`);
    expect(header(welcome, "list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    // the default template shows the link itself, once
    expect(String(welcome.text).trimEnd().endsWith(`Unsubscribe: ${url}`)).toBe(true);
    expect(String(welcome.text).split(url)).toHaveLength(2);
    expect(String(welcome.html)).toContain(`<a href="${url}">${url}</a>`);
  });

  test("a custom template without {{unsubscribe_link}} gets a visible link appended; one with it shows it where it is, once", async () => {
    const { one, signUp, key, path } = await waitlist({ welcome_email: { enabled: true, subject: "Hello {{name}}", body: "Welcome aboard, {{name}}." } });
    const plain = `plain-${uniq()}@example.com`;
    await signUp(plain);
    const first = await until(() => mailsTo(plain)[0], 5_000, "welcome email");
    const url = `${BASE_URL}/u/${(await one(plain)).sign_up_token}`;
    expect(String(first.text).trim()).toBe(`Welcome aboard, there.\n\nUnsubscribe: ${url}`);
    expect(String(first.html)).toContain(`<a href="${url}">`);

    await s.request("PATCH", `${path}/settings`, { key, body: { welcome_email: { body: "Opt out here: {{unsubscribe_link}}\n\nWelcome." } } });
    const placed = `placed-${uniq()}@example.com`;
    await signUp(placed);
    const second = await until(() => mailsTo(placed)[0], 5_000, "welcome email");
    const url2 = `${BASE_URL}/u/${(await one(placed)).sign_up_token}`;
    expect(String(second.text).trim()).toBe(`Opt out here: ${url2}\n\nWelcome.`);
    expect(header(second, "list-unsubscribe")).toBe(`<${url2}>`);
  });
});

describe("POST /u/{token}", () => {
  test("a GET and a HEAD change nothing; a one-click POST answers 200, sets unsubscribed_at, sends one subscriber.unsubscribed webhook; repeating is harmless; the place is kept", async () => {
    const { key, path, one, events, signUp, w } = await waitlist();
    const emails = [`a-${uniq()}@example.com`, `b-${uniq()}@example.com`, `c-${uniq()}@example.com`];
    for (const e of emails) await signUp(e);
    const target = await one(emails[1]);
    expect([target.unsubscribed_at, target.position]).toEqual([null, 2]);
    const link = `/u/${target.sign_up_token}`;
    await until(() => events("subscriber.created").length === 3, 5_000, "created webhooks");
    const outboxRows = async () => Number((await rows(sql`SELECT count(*) AS n FROM outbox WHERE waitlist_id = ${w.id}`))[0].n);
    const before = await outboxRows();

    for (const method of ["GET", "HEAD", "GET"]) {
      const r = await fetch(`${s.url}${link}`, { method });
      expect([method, r.status, r.headers.get("content-type")]).toEqual([method, 200, "text/html; charset=utf-8"]);
      expect(r.headers.get("content-security-policy")).toContain("form-action 'self'");
      const page = await r.text();
      if (method === "HEAD") expect(page).toBe("");
      else expect(page).toContain(`<form method="post" action="${link}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);
    }
    expect((await one(emails[1])).unsubscribed_at).toBeNull();
    expect(await outboxRows()).toBe(before);

    const startedAt = Date.now();
    const r = await oneClick(`<${BASE_URL}${link}>`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("<h1>You&#39;re unsubscribed</h1>");
    const after = await one(emails[1]);
    expect(after.unsubscribed_at).toBeGreaterThanOrEqual(startedAt - 1_000);
    expect(after.unsubscribed_at).toBeLessThanOrEqual(Date.now());
    expect([after.status, after.position]).toEqual(["waiting", 2]);

    const again = await oneClick(`<${BASE_URL}${link}>`);
    expect(again.status).toBe(200);
    expect((await one(emails[1])).unsubscribed_at).toBe(after.unsubscribed_at);
    const webhook = await until(() => events("subscriber.unsubscribed")[0], 5_000, "unsubscribed webhook");
    expect(webhook.body.data.subscriber).toMatchObject({ email: emails[1], unsubscribed_at: after.unsubscribed_at, position: 2 });
    expect(Number((await rows(sql`SELECT count(*) AS n FROM outbox WHERE waitlist_id = ${w.id} AND topic = 'subscriber.unsubscribed'`))[0].n)).toBe(1);

    // the page's button posts a form without the one-click body: the same, harmless
    expect((await fetch(`${s.url}${link}`, { method: "POST" })).status).toBe(200);
    expect(await (await fetch(`${s.url}${link}`)).text()).toContain("<h1>You&#39;re unsubscribed</h1>");
    expect(await (await fetch(`${s.url}/t/${target.sign_up_token}`)).text()).toContain('<span id="emails-off">Emails are off</span>');

    // ?unsubscribed=true|false filters the list; another value is a 400 naming the parameter
    const list = async (q: string) => s.request("GET", `${path}/subscribers?${q}`, { key });
    expect((await list("unsubscribed=true")).body.data.subscribers.map((x: any) => x.email)).toEqual([emails[1]]);
    expect((await list("unsubscribed=false&sort_by=email&sort_dir=asc")).body.data).toMatchObject({ total: 2, subscribers: [{ email: emails[0] }, { email: emails[2] }] });
    const bad = await list("unsubscribed=yes");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("unsubscribed");

    for (const method of ["GET", "POST"]) expect((await fetch(`${s.url}/u/notatoken`, { method })).status).toBe(404);
    expect(events("subscriber.unsubscribed")).toHaveLength(1);
  });

  test("after a one-click unsubscribe no email reaches the subscriber: no milestone, no invitation; others still get theirs", async () => {
    const { key, path, one, events, signUp, w } = await waitlist({
      welcome_email: { enabled: true },
      milestones: [{ referrals: 1, reward: "Sticker pack" }],
    });
    const [quitter, friend, stayer] = [`quit-${uniq()}@example.com`, `friend-${uniq()}@example.com`, `stay-${uniq()}@example.com`];
    const q = await signUp(quitter);
    const welcome = await until(() => mailsTo(quitter)[0], 5_000, "welcome email");
    const r = await oneClick(header(welcome, "list-unsubscribe")!);
    expect(r.status).toBe(200);

    // a referral brings the quitter to a milestone: the webhook goes, the email does not
    await signUp(friend, { referred_by: q.referral_code });
    await until(() => events("milestone.reached").length === 1 && mailsTo(friend).length === 1, 5_000, "milestone webhook and the friend's welcome");
    await signUp(stayer);
    expect((await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [quitter, stayer] } })).body.data.invited).toHaveLength(2);
    await until(() => mailsTo(stayer).length === 2 && events("subscriber.invited").length === 2, 5_000, "the stayer's invitation");
    // every email the waitlist queued has been dealt with: nothing left to send later
    await until(async () => Number((await rows(sql`SELECT count(*) AS n FROM outbox WHERE waitlist_id = ${w.id} AND status = 'pending'`))[0].n) === 0, 5_000, "an empty outbox");

    expect(mailsTo(quitter).map((m) => m.subject)).toEqual([welcome.subject]);
    const withheld = await rows(sql`SELECT topic, status, last_error FROM outbox WHERE waitlist_id = ${w.id} AND kind = 'email' AND subscriber_id = ${(await one(quitter)).id} ORDER BY created_at, id`);
    expect(withheld.map((x) => [x.topic, x.status, x.last_error])).toEqual([
      ["welcome", "sent", null],
      ["milestone", "failed", "not sent: the subscriber unsubscribed"],
      ["invitation", "failed", "not sent: the subscriber unsubscribed"],
    ]);
    // the invitation of the one still subscribed carries the headers too
    const invitation = mailsTo(stayer).find((m) => /invitation/i.test(m.subject ?? ""))!;
    expect(header(invitation, "list-unsubscribe")).toBe(`<${BASE_URL}/u/${(await one(stayer)).sign_up_token}>`);
    expect(header(invitation, "list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    // the quitter kept their place and was invited like anyone else
    expect(await one(quitter)).toMatchObject({ status: "invited", final_position: 1, unsubscribed_at: expect.any(Number) });
  });

  test("an email queued before the unsubscribe is not sent after it (checked at delivery)", async () => {
    const { one, signUp, w } = await waitlist({ welcome_email: { enabled: true } });
    const email = `queued-${uniq()}@example.com`;
    smtp.failNext(1);
    await signUp(email);
    const [row] = await until(async () => {
      const found = await rows(sql`SELECT id FROM outbox WHERE waitlist_id = ${w.id} AND topic = 'welcome' AND attempts = 1 AND last_error IS NOT NULL AND status = 'pending'`);
      return found.length ? found : null;
    }, 5_000, "a failed first attempt, due again later");
    expect((await fetch(`${s.url}/u/${(await one(email)).sign_up_token}`, { method: "POST" })).status).toBe(200);
    // bring the retry forward; the 5 s retry job picks it up
    await rows(sql`UPDATE outbox SET next_attempt_at = 0 WHERE id = ${row.id}`);
    const [settled] = await until(async () => {
      const found = await rows(sql`SELECT status, last_error FROM outbox WHERE id = ${row.id} AND status <> 'pending'`);
      return found.length ? found : null;
    }, 10_000, "the retry");
    expect([settled.status, settled.last_error]).toEqual(["failed", "not sent: the subscriber unsubscribed"]);
    expect(mailsTo(email)).toHaveLength(0);
  });
});
