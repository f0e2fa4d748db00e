// The form is not a mail relay (issue 16): confirmation emails to one address are capped, one per
// waitlist per 10 minutes and three a day, on every path (form, API, "send it again"), with answers that
// do not tell a capped request from another, and on two instances sharing one database. Emails are
// counted at a real SMTP server once a later email (a sentinel) has arrived.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import type { Db } from "../src/db/db";
import { startSmtp, type Smtp } from "./support/peers";
import { startServer, until, type TestServer } from "./support/server";
import { inOneWindow } from "./support/windows";

let smtp: Smtp;
let s: TestServer;
let twin: TestServer;
let db: Db;
beforeAll(async () => {
  smtp = await startSmtp();
  // behind a proxy, so each post can come from its own IP, as a botnet's would; rate limits on
  s = await startServer({ env: { SMTP_URL: smtp.url, TRUST_PROXY: "true" } });
  twin = await startServer({ env: { SMTP_URL: smtp.url, TRUST_PROXY: "true" }, dbUrl: s.dbUrl });
  db = await openDatabase({ url: s.dbUrl, poolSize: 2 });
});
afterAll(async () => {
  await db?.close();
  await twin?.stop();
  await s?.stop();
  await smtp?.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const own = (server: TestServer) => server.url.replace("127.0.0.1", "localhost");
let ipSeq = 0;
const nextIp = () => `198.51.${Math.floor(++ipSeq / 250) % 250}.${(ipSeq % 250) + 1}`;
const mailsTo = (address: string) => smtp.messages.filter((m) => JSON.stringify(m.to ?? "").includes(address));

async function waitlist(server = s) {
  const { key } = await server.account();
  const w = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Relay ${uniq()}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await server.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true } })).status).toBe(200);
  return { key, w, path };
}

async function formPost(server: TestServer, waitlistKey: string, email: string) {
  const r = await fetch(`${server.url}/s/${waitlistKey}`, {
    method: "POST",
    body: JSON.stringify({ email }),
    headers: { "content-type": "application/json", accept: "application/json", origin: own(server), "x-forwarded-for": nextIp() },
  });
  return { status: r.status, body: (await r.json()) as any };
}

async function resend(server: TestServer, waitlistKey: string, fields: Record<string, string>, opts: { json?: boolean; ip?: string; origin?: string } = {}) {
  const r = await fetch(`${server.url}/pending/${waitlistKey}/resend`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: opts.json ? "application/json" : "text/html",
      origin: opts.origin ?? own(server),
      "x-forwarded-for": opts.ip ?? nextIp(),
    },
    redirect: "manual",
  });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/**
 * Exactly `counts` emails per address: waits until each has at least its count (deliveries run concurrently, so
 * they may arrive in any order), then for a fresh address's confirmation email, so that an email too many, caused
 * before it, has had its chance to arrive too.
 */
async function expectMails(server: TestServer, waitlistKey: string, counts: Record<string, number>) {
  await until(() => Object.entries(counts).every(([to, n]) => mailsTo(to).length >= n), 10_000, `the emails ${JSON.stringify(counts)}`);
  const email = `sentinel-${uniq()}@example.com`;
  expect((await formPost(server, waitlistKey, email)).status).toBe(200);
  await until(() => mailsTo(email).length === 1, 10_000, "the sentinel's confirmation email");
  for (const [to, n] of Object.entries(counts)) expect([to, mailsTo(to).length]).toEqual([to, n]);
}

/** Moves an address's recorded sends back in time, as if `ms` had passed. */
const age = (email: string, ms: number) => db.exec(sql`UPDATE confirmation_sends SET sent_at = sent_at - ${ms} WHERE email = ${email}`);

const MINUTES_11 = 11 * 60_000;

describe("sign-ups", () => {
  test("20 form posts for one stranger's address in a minute (from 20 IPs) send that address one email; every repeat answers the same", async () => {
    const { w } = await waitlist();
    const stranger = `stranger-${uniq()}@example.com`;
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await formPost(s, w.key, stranger));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers[0].body).toMatchObject({ success: true, is_new_sign_up: true, is_pending_confirmation: true });
    const repeat = { success: true, is_new_sign_up: false, is_pending_confirmation: true, message: expect.stringContaining("already signed up"), redirect_url: `${own(s)}/pending/${w.key}` };
    for (const a of answers.slice(1)) expect(a.body).toEqual(answers[1].body);
    expect(answers[1].body).toEqual(repeat);
    await expectMails(s, w.key, { [stranger]: 1 });
  }, 30_000);

  test("API sign-ups share the caps; a repeat after 10 minutes sends the email again, at most 3 a day; answers never change", async () => {
    const { key, w, path } = await waitlist();
    const email = `api-${uniq()}@example.com`;
    const signUp = () => s.request("POST", `${path}/sign-up`, { key, body: { email } });
    const first = await signUp();
    expect(first.body.is_new_sign_up).toBe(true);
    const repeats = [await signUp()];
    await age(email, MINUTES_11);
    repeats.push(await signUp()); // the 2nd email
    await age(email, MINUTES_11);
    repeats.push(await signUp()); // the 3rd
    await age(email, MINUTES_11);
    repeats.push(await signUp()); // over the daily cap: nothing
    for (const r of repeats) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual(repeats[0].body);
    }
    await expectMails(s, w.key, { [email]: 3 });
  }, 30_000);

  test("one address on 4 waitlists in a day gets 3 confirmation emails; every answer is the usual new sign-up", async () => {
    const email = `many-${uniq()}@example.com`;
    const lists = await Promise.all([waitlist(), waitlist(), waitlist(), waitlist()]);
    const answers = [];
    for (const { w } of lists) answers.push(await formPost(s, w.key, email));
    for (const a of answers) expect(a.body).toMatchObject({ success: true, is_new_sign_up: true, is_pending_confirmation: true, message: answers[0].body.message });
    await expectMails(s, lists[3].w.key, { [email]: 3 });
  }, 30_000);

  test("two instances on one database: 10 posts at once, split between them, send one email; 8 at once to 4 waitlists send 3", async () => {
    const { w } = await waitlist();
    const email = `twin-${uniq()}@example.com`;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => formPost(i % 2 ? twin : s, w.key, email)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.is_new_sign_up)).toHaveLength(1);

    const many = `twin-many-${uniq()}@example.com`;
    const lists = await Promise.all([waitlist(), waitlist(twin), waitlist(), waitlist(twin)]);
    const spread = await Promise.all(lists.flatMap(({ w: l }, i) => [formPost(s, l.key, many), formPost(twin, l.key, many)].map((p) => p.then((a) => [i, a] as const))));
    expect(spread.every(([, a]) => a.status === 200)).toBe(true);
    await expectMails(twin, w.key, { [email]: 1, [many]: 3 });
  }, 30_000);
});

describe('"send it again" (POST /pending/{waitlistKey}/resend)', () => {
  test("answers the same for a pending, a just-sent, an unknown and a confirmed address; only the pending one past its window gets an email", async () => {
    const { key, w, path } = await waitlist();
    const pending = `pending-${uniq()}@example.com`;
    expect((await formPost(s, w.key, pending)).body.is_new_sign_up).toBe(true);
    await until(() => mailsTo(pending).length === 1, 10_000, "the first confirmation email");
    // a confirmed subscriber: follow the emailed link (a POST acts; a GET may only show the page)
    const confirmed = `confirmed-${uniq()}@example.com`;
    await formPost(s, w.key, confirmed);
    const mail = await until(() => mailsTo(confirmed)[0], 10_000, "the confirmed address's email");
    const link = (mail.text ?? "").match(/https?:\/\/\S+\/confirm\/\S+/)![0].replace(own(s), s.url);
    await fetch(link, { method: "POST", redirect: "manual" });
    await fetch(link, { redirect: "manual" });
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(confirmed)}`, { key })).body.data.subscriber.status).toBe("waiting"); // confirmed, in line

    const capped = await resend(s, w.key, { email: pending }); // inside the 10 minutes: nothing
    await age(pending, MINUTES_11);
    const sent = await resend(s, w.key, { email: pending.toUpperCase() }); // past them: the 2nd email
    const unknown = await resend(s, w.key, { email: `nobody-${uniq()}@example.com` });
    const done = await resend(s, w.key, { email: confirmed });
    for (const r of [capped, sent, unknown, done]) {
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("text/html");
      expect(r.text).toBe(capped.text);
    }
    expect(capped.text).toContain("If this address is waiting for confirmation, a new confirmation email is on its way.");
    const asJson = await resend(s, w.key, { email: `nobody-${uniq()}@example.com` }, { json: true });
    expect(JSON.parse(asJson.text)).toEqual({ success: true, message: expect.stringMatching(/^If this address is waiting for confirmation/) });

    await expectMails(s, w.key, { [pending]: 2, [confirmed]: 1 });
  }, 30_000);

  test("bad input is a clear 4xx: no email (400), an invalid email (400), an unknown waitlist (404), a foreign site (403)", async () => {
    const { w } = await waitlist();
    const missing = await resend(s, w.key, {}, { json: true });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toEqual({ statusCode: 400, message: "email is required" });
    const invalid = await resend(s, w.key, { email: "nope" }, { json: true });
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.text)).toEqual({ statusCode: 400, message: "email must be a valid email address" });
    const unknown = await resend(s, `nope${uniq()}`, { email: "a@example.com" }, { json: true });
    expect(unknown.status).toBe(404);
    const foreign = await resend(s, w.key, { email: "a@example.com" }, { json: true, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
  });

  test("the 11th post in a minute from one IP is 429 with Retry-After equal to retry_after", async () => {
    await inOneWindow(async (track) => {
      const { w } = await waitlist();
      const ip = nextIp();
      const statuses: number[] = [];
      let last!: Awaited<ReturnType<typeof resend>>;
      for (let i = 0; i < 11; i++) {
        last = await resend(s, w.key, { email: `r${i}-${uniq()}@example.com` }, { json: true, ip });
        track({ status: last.status, headers: last.headers, body: undefined, text: last.text });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10).every((st) => st === 200)).toBe(true);
      expect(last.status).toBe(429);
      const body = JSON.parse(last.text);
      expect(body).toEqual({ statusCode: 429, message: expect.any(String), data: { retry_after: expect.any(Number) } });
      expect(last.headers.get("retry-after")).toBe(String(body.data.retry_after));
    });
  });
});
