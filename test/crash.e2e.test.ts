// Crash safety (issue 10): SIGKILL in the middle of a burst of sign-ups. After a restart on the same
// database every sign-up that was answered 200 is there with its position, and the emails and
// webhooks they owed still go out.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { engine, startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

let smtp: Smtp;
let hooks: Receiver;
const servers: TestServer[] = [];
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
});
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {});
  hooks.stop();
  await smtp.close();
});

// SQLite only: the killed server's embedded file is read back through libSQL (PostgreSQL: test/pg-outage.e2e.test.ts)
test.skipIf(engine === "pg")("every sign-up answered 200 before a SIGKILL is there after the restart, ranked 1..n, and gets its welcome email and webhook", async () => {
  const env = { RATE_LIMITS: "off", SMTP_URL: smtp.url };
  const first = await startServer({ env });
  servers.push(first);
  const { key } = await first.account("business");
  const w = (await first.request("POST", "/api/v1/waitlists", { key, body: { name: `Crash ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  await first.request("PATCH", `${path}/settings`, { key, body: { welcome_email: { enabled: true }, webhook: { url: hooks.url, enabled: true } } });

  // 16 clients sign up as fast as they can; the server is killed once 150 have been answered
  const answered: string[] = [];
  let killed = false;
  let n = 0;
  const client = async () => {
    while (!killed) {
      const email = `crash${n++}@example.com`;
      try {
        const r = await fetch(`${first.url}${path}/sign-up`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ email }) });
        if (r.status === 200 && ((await r.json()) as { is_new_sign_up: boolean }).is_new_sign_up) answered.push(email);
        if (answered.length >= 150 && !killed) {
          killed = true;
          first.proc.kill("SIGKILL");
        }
      } catch {
        return; // the server is gone
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  await first.proc.exited;
  expect(answered.length).toBeGreaterThanOrEqual(150);

  const second = await startServer({ dbUrl: first.dbUrl, env });
  servers.push(second);
  const positions: number[] = [];
  for (const email of answered) {
    const r = await second.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key });
    expect(r.status, email).toBe(200);
    positions.push(r.body.data.subscriber.position);
  }
  // every stored subscriber (answered or not: a request may have committed just before the kill) has a distinct place
  const total = (await second.request("GET", `${path}/stats`, { key })).body.data.subscribers_total as number;
  expect(total).toBeGreaterThanOrEqual(answered.length);
  expect(new Set(positions).size).toBe(answered.length);
  expect(Math.max(...positions)).toBeLessThanOrEqual(total);
  const list = await second.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=100&page=1`, { key });
  expect(list.body.data.subscribers.map((s: { position: number }) => s.position)).toEqual(Array.from({ length: Math.min(100, total) }, (_, i) => i + 1));

  // what the first instance owed: rows it had claimed when it died wait out their 60 s claim, which
  // the test shortens; everything else goes out at start-up or on the 5 s retry job
  const db = createClient({ url: first.dbUrl, timeout: 5_000 });
  await db.execute({ sql: "UPDATE outbox SET locked_until = 0 WHERE waitlist_id = ? AND status = 'pending'", args: [w.id] });
  db.close();
  await until(() => answered.every((email) => smtp.messages.some((m) => JSON.stringify(m.to).includes(email))), 20_000, "a welcome email for every answered sign-up");
  await until(
    () => answered.every((email) => hooks.deliveries.some((d) => d.body?.type === "subscriber.created" && d.body?.data?.subscriber?.email === email)),
    20_000,
    "a subscriber.created webhook for every answered sign-up",
  );
}, 60_000);
