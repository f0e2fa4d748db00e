// Issue 45: a broadcast reaches each subscriber once "even with several instances". Two servers on one database (one
// PostgreSQL database, or one embedded file) run the broadcasts job, and the test races two more queuers of its own on
// the same broadcast (each on its own connection): every subscriber of the segment gets one email, and the database
// holds one recipient row and one outbox row per subscriber.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { queueBatch } from "../src/broadcasts/sender";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";

const SUBSCRIBERS = 120;
let smtp: Smtp;
let a: TestServer;
let b: TestServer;
let dbs: Db[] = [];
beforeAll(async () => {
  smtp = await startSmtp();
  const env = { RATE_LIMITS: "off", SMTP_URL: smtp.url, MAIL_FROM: "Two <two@two.example>", MAIL_RATE_PER_MINUTE: "60000" };
  a = await startServer({ env });
  b = await startServer({ dbUrl: a.dbUrl, env });
  dbs = await Promise.all([openDatabase({ url: a.dbUrl, poolSize: 2 }), openDatabase({ url: a.dbUrl, poolSize: 2 })]);
});
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await b?.stop();
  await a?.stop();
  await smtp?.close();
});

test("two instances and two racing queuers: one recipient row, one outbox row and one email per subscriber", async () => {
  const { key } = await a.account("growth");
  const w = (await a.request("POST", "/api/v1/waitlists", { key, body: { name: `Two ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const emails = Array.from({ length: SUBSCRIBERS }, (_, i) => `two${i}@example.com`);
  await Promise.all(emails.map((email, i) => (i % 2 ? a : b).request("POST", `${path}/sign-up`, { key, body: { email } })));
  const subject = "Twice is too many";
  const broadcast = (await a.request("POST", `${path}/broadcasts`, { key, body: { subject, body_markdown: "Hello {{first_name}}" } })).body.data.broadcast;
  expect(broadcast.recipients).toBe(SUBSCRIBERS);
  expect((await b.request("POST", `${path}/broadcasts/${broadcast.id}/send`, { key })).status).toBe(200);
  // the test's own queuers race each other and both servers' jobs, batch by batch, until the segment is exhausted
  const queuer = async (db: Db) => {
    for (let outcome = ""; outcome !== "done" && outcome !== "gone"; ) outcome = await queueBatch(db, broadcast.id, 60_000);
  };
  await Promise.all(dbs.map(queuer));
  const done = await until(
    async () => {
      const x = (await a.request("GET", `${path}/broadcasts/${broadcast.id}`, { key })).body.data.broadcast;
      return x.status === "sent" && x;
    },
    30_000,
    "the broadcast to be sent",
  );
  expect(done).toMatchObject({ recipients: SUBSCRIBERS, sent: SUBSCRIBERS, failed: 0, skipped: 0 });
  const [rows] = await dbs[0].rows<{ recipients: number; outbox: number; distinct_subscribers: number }>(sql`SELECT
    (SELECT count(*) FROM broadcast_recipients WHERE broadcast_id = ${broadcast.id}) AS recipients,
    (SELECT count(*) FROM outbox WHERE topic = 'broadcast' AND related_id = ${broadcast.id}) AS outbox,
    (SELECT count(DISTINCT subscriber_id) FROM outbox WHERE topic = 'broadcast' AND related_id = ${broadcast.id}) AS distinct_subscribers`);
  expect([Number(rows.recipients), Number(rows.outbox), Number(rows.distinct_subscribers)]).toEqual([SUBSCRIBERS, SUBSCRIBERS, SUBSCRIBERS]);
  const got = smtp.messages.filter((m) => m.subject === subject).map((m) => (Array.isArray(m.to) ? m.to[0] : m.to)!.value[0].address);
  expect(got.length).toBe(SUBSCRIBERS);
  expect(new Set(got).size).toBe(SUBSCRIBERS);
}, 60_000);
