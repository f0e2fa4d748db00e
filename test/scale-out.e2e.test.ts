// Scale-out (DESIGN §6): two instances on one database file, requests alternating between them. Everything
// shared lives in the database: rate-limit windows, view dedupe, outbox claims and job leases, positions, page versions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

let a: TestServer;
let b: TestServer;
let hooks: Receiver;
let smtp: Smtp;
beforeAll(async () => {
  hooks = startReceiver();
  smtp = await startSmtp();
  a = await startServer({ env: { SMTP_URL: smtp.url } });
  b = await startServer({ dbUrl: a.dbUrl, env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const pick = (i: number) => (i % 2 === 0 ? a : b);

async function setup(plan = "business") {
  const { key } = await a.account(plan);
  const w = (await b.request("POST", "/api/v1/waitlists", { key, body: { name: `Scale ${uniq()}`, referral_rewards: { enabled: true }, landing_page: { headline: "Version one" } } })).body.data.waitlist;
  return { key, w, path: `/api/v1/waitlist/${w.key}` };
}

test("a rate-limit window is shared: the 11th sign-up of a minute on a free key is refused whichever instance gets it", async () => {
  for (let attempt = 0; attempt < 2; attempt++) {
    const { key, path } = await setup("free");
    const results: { status: number; reset: string | null }[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await pick(i).request("POST", `${path}/sign-up`, { key, body: { email: `rl${i}-${uniq()}@example.com` } });
      results.push({ status: r.status, reset: r.headers.get("x-ratelimit-reset") });
    }
    if (new Set(results.map((r) => r.reset)).size > 1) continue; // crossed a minute boundary: try once more
    expect(results.map((r) => r.status)).toEqual([...Array(10).fill(200), 429]);
    return;
  }
  throw new Error("could not stay within one window");
});

test("a view is deduplicated across instances", async () => {
  const { key, path } = await setup();
  expect((await a.request("POST", `${path}/log-view`, { key, body: { visitor_id: "shared-visitor" } })).body.success).toBe(true);
  expect((await b.request("POST", `${path}/log-view`, { key, body: { visitor_id: "shared-visitor" } })).body.success).toBe(false);
  expect((await b.request("GET", `${path}/stats`, { key })).body.data.views_total).toBe(1);
});

test("positions agree on both instances after changes made on either", async () => {
  const { key, path } = await setup();
  const codes: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await pick(i).request("POST", `${path}/sign-up`, { key, body: { email: `p${i}@example.com`, metadata: i > 0 && i % 4 === 0 ? { referred_by: codes[0] } : {} } });
    codes.push(r.body.referral_code);
  }
  await b.request("PUT", `${path}/subscribers/p5%40example.com`, { key, body: { points: 1000 } });
  await a.request("DELETE", `${path}/subscribers/p1%40example.com`, { key });
  const order = async (s: TestServer) => (await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=100`, { key })).body.data.subscribers.map((x: any) => [x.email, x.position]);
  const fromA = await order(a);
  expect(await order(b)).toEqual(fromA);
  expect(fromA.slice(0, 2)).toEqual([["p5@example.com", 1], ["p0@example.com", 2]]);
  expect(fromA.length).toBe(11);
});

test("a settings change through one instance applies at once on the other (each keeps the waitlist row only while its version matches)", async () => {
  const { key, path } = await setup();
  // both instances have used the waitlist (and keep its row)
  for (const s of [a, b]) expect((await s.request("POST", `${path}/sign-up`, { key, body: { email: `warm-${uniq()}@example.com` } })).body.is_pending_confirmation).toBe(false);
  expect((await a.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true, position_offset: 7 } })).status).toBe(200);
  const signUp = await b.request("POST", `${path}/sign-up`, { key, body: { email: `after-${uniq()}@example.com` } });
  expect(signUp.body.is_pending_confirmation).toBe(true);
  expect((await b.request("GET", `${path}/settings`, { key })).body.data.settings.position_offset).toBe(7);
  // counters are read fresh, not from the kept row
  const stats = await Promise.all([a, b].map(async (s) => (await s.request("GET", `${path}/stats`, { key })).body.data.subscribers_total));
  expect(stats).toEqual([2, 2]);
  await a.request("POST", `${path}/sign-up`, { key, body: { email: `third-${uniq()}@example.com` } });
  expect((await a.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: false } })).status).toBe(200);
  await b.request("POST", `${path}/sign-up`, { key, body: { email: `fourth-${uniq()}@example.com` } });
  expect((await b.request("GET", `${path}/stats`, { key })).body.data.subscribers_total).toBe(3);
});

test("a page change through one instance is live on the other at once (no stale cache)", async () => {
  const { key, w, path } = await setup();
  await a.request("POST", `${path}/landing-page/publish`, { key });
  for (const s of [a, b]) expect(await (await fetch(`${s.url}/p/${w.slug}`)).text()).toContain("Version one");
  await a.request("PATCH", `${path}/landing-page`, { key, body: { headline: "Version two" } });
  const fromB = await (await fetch(`${b.url}/p/${w.slug}`)).text();
  expect(fromB).toContain("Version two");
  expect(fromB).not.toContain("Version one");
});

test("each webhook attempt is made once, by one instance: a failed first attempt and its retry, never more", async () => {
  const { key, w, path } = await setup();
  await a.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true } } });
  hooks.respondWith(500, 500, 500);
  for (let i = 0; i < 3; i++) await pick(i).request("POST", `${path}/sign-up`, { key, body: { email: `hook${i}@example.com` } });
  const mine = () => hooks.deliveries.filter((d) => d.body?.waitlist?.key === w.key);
  await until(() => mine().length === 3, 5_000, "three failed first attempts");
  // make every retry due now: both instances' retry jobs (each every 5 s) race for the rows
  const db = createClient({ url: a.dbUrl, timeout: 5_000 });
  await db.execute({ sql: "UPDATE outbox SET next_attempt_at = 0 WHERE waitlist_id = ?", args: [w.id] });
  await until(async () => (await db.execute({ sql: "SELECT count(*) AS n FROM outbox WHERE waitlist_id = ? AND status = 'sent'", args: [w.id] })).rows[0].n === 3, 15_000, "retries sent");
  db.close();
  const perId = new Map<string, number>();
  for (const d of mine()) perId.set(d.body.id, (perId.get(d.body.id) ?? 0) + 1);
  expect([...perId.values()]).toEqual([2, 2, 2]);
});

test("each email is sent once, whichever instance took the sign-up, retries included", async () => {
  const { key, w, path } = await setup();
  await a.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true } });
  smtp.failNext(2);
  const emails = Array.from({ length: 6 }, (_, i) => `mail${i}-${uniq()}@example.com`);
  for (const [i, email] of emails.entries()) await pick(i).request("POST", `${path}/sign-up`, { key, body: { email } });
  const db = createClient({ url: a.dbUrl, timeout: 5_000 });
  // the two refused sends are retried by whichever instance's job claims them first
  await until(async () => {
    await db.execute({ sql: "UPDATE outbox SET next_attempt_at = 0 WHERE kind = 'email' AND status = 'pending' AND attempts > 0 AND waitlist_id = ?", args: [w.id] });
    const sent = await db.execute({ sql: "SELECT count(*) AS n FROM outbox WHERE kind = 'email' AND status = 'sent' AND waitlist_id = ?", args: [w.id] });
    return (sent.rows[0].n as number) >= 6;
  }, 20_000, "all confirmation emails sent");
  db.close();
  for (const email of emails) expect(smtp.messages.filter((m) => JSON.stringify(m.to).includes(email))).toHaveLength(1);
});
