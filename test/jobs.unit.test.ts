// Cron jobs (DESIGN §1, §6): leases so one instance runs a job at a time, and the pruning they do
// (rate-limit windows kept an hour, delivered outbox rows 30 days, view dedupe rows and dashboard previews
// until they expire).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Db } from "../src/db/open";
import { takeLease } from "../src/jobs";
import { pruneRateLimitsQuery } from "../src/http/rate-limit";
import { claim, pruneSent } from "../src/outbox/store";
import { prunePreviews } from "../src/landing/preview";
import { pruneCaptchaSolutions } from "../src/forms/captcha";
import { pruneConfirmationSends } from "../src/subscribers/confirmation-caps";
import { createDispatcher } from "../src/outbox/dispatcher";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { scratchDatabase } from "./support/db";

let db: Db;
let close: () => void;
beforeAll(async () => {
  ({ db, close } = await scratchDatabase());
});
afterAll(() => close());

test("a lease is held by one instance until it expires; its holder may renew it", async () => {
  expect(await takeLease(db, "job", "instance-a", 60_000)).toBe(true);
  expect(await takeLease(db, "job", "instance-b", 60_000)).toBe(false);
  expect(await takeLease(db, "job", "instance-a", 60_000)).toBe(true);
  await db.exec(sql`UPDATE job_leases SET expires_at = 0 WHERE name = 'job'`);
  expect(await takeLease(db, "job", "instance-b", 60_000)).toBe(true);
  expect(await takeLease(db, "job", "instance-a", 60_000)).toBe(false);
});

test("rate-limit windows older than an hour are pruned, newer ones kept", async () => {
  const now = Date.now();
  await db.exec(sql`INSERT INTO rate_limits (subject, window_start, count) VALUES ('old', ${now - 3_700_000}, 3), ('new', ${now - 60_000}, 3)`);
  await db.exec(pruneRateLimitsQuery(now - 3_600_000));
  const left = await db.rows<{ subject: string }>(sql`SELECT subject FROM rate_limits ORDER BY subject`);
  expect(left.map((r) => r.subject)).toEqual(["new"]);
});

test("delivered outbox rows, skipped webhook events and the delivery log are kept 30 days; pending and failed rows are never pruned", async () => {
  const now = Date.now();
  const day = 86_400_000;
  const row = (id: string, status: string, sentAt: number | null) =>
    db.exec(sql`INSERT INTO outbox (id, kind, topic, waitlist_id, status, attempts, next_attempt_at, created_at, sent_at)
      VALUES (${id}, 'webhook', 'subscriber.created', 'w', ${status}, 1, 0, 0, ${sentAt})`);
  await row("sent-old", "sent", now - 31 * day);
  await row("sent-new", "sent", now - 29 * day);
  await row("pending-old", "pending", null);
  await row("failed-old", "failed", null);
  await row("skipped-old", "skipped", null);
  await db.exec(sql`INSERT INTO webhook_endpoints (id, waitlist_id, url, secret, created_at, updated_at) VALUES ('we', 'w', 'http://127.0.0.1/', 'whsec_x', 0, 0)`);
  const entry = (id: string, at: number) =>
    db.exec(sql`INSERT INTO webhook_deliveries (id, endpoint_id, outbox_id, event_id, event, status, attempted_at) VALUES (${id}, 'we', 'o', 'e', 'subscriber.created', 'delivered', ${at})`);
  await entry("old", now - 31 * day);
  await entry("new", now - 29 * day);
  await pruneSent(db, now);
  const left = await db.rows<{ id: string }>(sql`SELECT id FROM outbox ORDER BY id`);
  expect(left.map((r) => r.id)).toEqual(["failed-old", "pending-old", "sent-new"]);
  const log = await db.rows<{ id: string }>(sql`SELECT id FROM webhook_deliveries`);
  expect(log.map((r) => r.id)).toEqual(["new"]);
  await db.exec(sql`DELETE FROM webhook_endpoints WHERE id = 'we'`);
});

test("dashboard previews are pruned once expired", async () => {
  const now = Date.now();
  await db.exec(sql`INSERT INTO landing_previews (token, waitlist_id, page, expires_at) VALUES ('gone', 'w', '{}', ${now}), ('live', 'w', '{}', ${now + 1})`);
  await prunePreviews(db, now);
  const left = await db.rows<{ token: string }>(sql`SELECT token FROM landing_previews`);
  expect(left.map((r) => r.token)).toEqual(["live"]);
});

test("the retry job works through a backlog batch after batch in one tick, not 50 rows per 5 s", async () => {
  const at = Date.now();
  for (let i = 0; i < 120; i++) {
    // rows whose subscriber is gone: each attempt settles them at once (abandoned), so only the batching is measured
    await db.exec(sql`INSERT INTO outbox (id, kind, topic, waitlist_id, subscriber_id, status, attempts, next_attempt_at, created_at)
      VALUES (${`backlog-${i}`}, 'webhook', 'subscriber.created', 'w', 'gone', 'pending', 0, ${at - 1}, ${at - 1})`);
  }
  const dispatcher = createDispatcher({ db, config: loadConfig({}), log: createLogger("error", () => {}) });
  // 120, plus the pending row the outbox test above leaves due
  expect(await dispatcher.catchUp(3_000)).toBe(121);
  const [{ due }] = await db.rows<{ due: number }>(sql`SELECT count(*) AS due FROM outbox WHERE id LIKE 'backlog-%' AND status = 'pending'`);
  expect(due).toBe(0);
  dispatcher.close();
});

test("claims at once (two instances) never take the same outbox row, and take no more than asked", async () => {
  const at = Date.now();
  for (let i = 0; i < 60; i++) {
    await db.exec(sql`INSERT INTO outbox (id, kind, topic, waitlist_id, status, attempts, next_attempt_at, created_at)
      VALUES (${`race-${String(i).padStart(2, "0")}`}, 'webhook', 'subscriber.created', 'w', 'pending', 0, ${at - 10}, ${at - 10})`);
  }
  await db.exec(sql`UPDATE outbox SET status = 'sent' WHERE id NOT LIKE 'race-%' AND status = 'pending'`);
  const batches = await Promise.all([claim(db, null, 25, at), claim(db, null, 25, at), claim(db, null, 25, at), claim(db, null, 25, at)]);
  const ids = batches.flat().map((r) => r.id);
  expect(batches.every((b) => b.length <= 25)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.length).toBe(60);
  expect(await claim(db, { rows: ids.slice(0, 5) }, 20, at)).toEqual([]);
  await db.exec(sql`DELETE FROM outbox WHERE id LIKE 'race-%'`);
});

test("issue 16: spent captcha solutions are pruned once their challenge expired; confirmation sends after a day", async () => {
  const now = Date.now();
  await db.exec(sql`INSERT INTO captcha_solutions (signature, expires_at) VALUES ('expired', ${now - 1}), ('live', ${now + 60_000})`);
  await pruneCaptchaSolutions(db, now);
  expect((await db.rows<{ signature: string }>(sql`SELECT signature FROM captcha_solutions`)).map((r) => r.signature)).toEqual(["live"]);
  await db.exec(sql`INSERT INTO confirmation_sends (email, waitlist_id, sent_at) VALUES ('old@example.com', 'w', ${now - 86_400_001}), ('new@example.com', 'w', ${now - 86_000_000})`);
  await pruneConfirmationSends(db, now);
  expect((await db.rows<{ email: string }>(sql`SELECT email FROM confirmation_sends`)).map((r) => r.email)).toEqual(["new@example.com"]);
});
