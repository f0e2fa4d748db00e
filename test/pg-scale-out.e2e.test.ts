// Two instances on one database under concurrent load (issue 18 items 3, 6; DESIGN §6): sign-ups (some referred,
// some of one email through both instances at once), point changes and deletes (referrers included, while their
// referees sign up) through both; then everything the instances keep is recounted from the rows with direct SQL.
// On PostgreSQL (TEST_ENGINE=pg) both share one database; on SQLite, one embedded file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { engine, startServer, until, type Response, type TestServer } from "./support/server";
import { startReceiver, type Receiver } from "./support/peers";

let a: TestServer;
let b: TestServer;
let hooks: Receiver;
let db: Db;
beforeAll(async () => {
  hooks = startReceiver();
  const env = { RATE_LIMITS: "off" };
  a = await startServer({ env });
  b = await startServer({ dbUrl: a.dbUrl, env });
  db = await openDatabase({ url: a.dbUrl, poolSize: 2 });
});
afterAll(async () => {
  await db?.close();
  await b?.stop();
  await a?.stop();
  hooks?.stop();
});

/** Each unexpected answer with the server's error line for that request (which names the cause), once it is logged. */
async function explain(unexpected: { what: string; r: Response }[]): Promise<string[]> {
  return Promise.all(
    unexpected.map(async ({ what, r }) => {
      const id = r.headers.get("x-request-id") ?? "-";
      const line = () => [...a.logs, ...b.logs].find((l) => l.includes(id) && l.includes('"level":"error"'));
      await until(line, 2_000).catch(() => {});
      return `${what}: ${r.status} ${r.text.slice(0, 120)} ${(line() ?? "").slice(0, 400)}`;
    }),
  );
}

const SIGN_UPS = 240;
const CLIENTS = 16;

interface Ranked {
  id: string;
  email: string;
  points: number;
  seq: number;
}

test(`${engine}: two instances under concurrent sign-ups, referrals, point changes and deletes keep positions, counters and deliveries exact`, async () => {
  const { key } = await a.account("business");
  const w = (await b.request("POST", "/api/v1/waitlists", { key, body: { name: `Scale ${Math.random().toString(36).slice(2, 8)}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await a.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true } } })).status).toBe(200);

  const codes: string[] = [];
  const signedUp: string[] = [];
  const unexpected: { what: string; r: Response }[] = [];
  const check = (what: string, r: Response, ok: number[]) => {
    if (!ok.includes(r.status)) unexpected.push({ what, r });
  };
  // a fixed script, so a failure reproduces: every 3rd sign-up referred by an earlier one, every 10th email
  // signed up through both instances at once, a point change every 4th step, a delete every 7th (often of a
  // referrer, whose code the next sign-ups still carry)
  let next = 0;
  const step = async (i: number) => {
    const email = `s${i}@example.com`;
    const via = i % 2 === 0 ? a : b;
    const other = via === a ? b : a;
    const referredBy = i % 3 === 0 && codes.length ? codes[(i * 7) % codes.length] : undefined;
    const body = { email, metadata: referredBy ? { referred_by: referredBy } : {} };
    const tries = i % 10 === 0 ? [via.request("POST", `${path}/sign-up`, { key, body }), other.request("POST", `${path}/sign-up`, { key, body })] : [via.request("POST", `${path}/sign-up`, { key, body })];
    for (const r of await Promise.all(tries)) {
      check(`sign-up ${email}`, r, [200, 201]);
      if (r.body?.referral_code && !codes.includes(r.body.referral_code)) codes.push(r.body.referral_code);
    }
    signedUp.push(email);
    if (i % 4 === 1 && signedUp.length > 2) {
      const target = signedUp[(i * 5) % signedUp.length];
      check(`points ${target}`, await other.request("PUT", `${path}/subscribers/${encodeURIComponent(target)}`, { key, body: { points: (i * 37) % 500 } }), [200, 404]);
    }
    if (i % 7 === 3 && signedUp.length > 4) {
      // the referrer of a recent referred sign-up when there is one, else an earlier subscriber
      const target = signedUp[(i * 3) % signedUp.length];
      check(`delete ${target}`, await via.request("DELETE", `${path}/subscribers/${encodeURIComponent(target)}`, { key }), [200, 204, 404]);
    }
  };
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < SIGN_UPS; i = next++) await step(i);
    }),
  );
  expect(await explain(unexpected)).toEqual([]);

  const rows = <T>(q: ReturnType<typeof sql>) => db.rows<T>(q);
  // every delivery made (the receiver answers 200): nothing left to send
  await until(async () => (await rows<{ n: number }>(sql`SELECT count(*) AS n FROM outbox WHERE waitlist_id = ${w.id} AND status <> 'sent'`))[0].n === 0, 60_000, "the outbox drained");

  // one subscriber per email
  expect(await rows(sql`SELECT email, count(*) AS n FROM subscribers WHERE waitlist_id = ${w.id} GROUP BY email HAVING count(*) > 1`)).toEqual([]);

  // positions: the API's equal the rank recounted from the rows (points desc, then confirmation order)
  const ranked = await rows<Ranked>(sql`SELECT id, email, points, seq FROM subscribers WHERE waitlist_id = ${w.id} AND access = 'waiting' AND seq IS NOT NULL`);
  ranked.sort((x, y) => y.points - x.points || x.seq - y.seq);
  const expected = ranked.map((r, i) => [r.email, i + 1]);
  for (const s of [a, b]) {
    const listed: [string, number][] = [];
    for (let page = 1; ; page++) {
      const r = await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=100&page=${page}`, { key });
      expect(r.status).toBe(200);
      for (const x of r.body.data.subscribers) if (x.position !== undefined) listed.push([x.email, x.position]);
      if (page >= r.body.data.pages) break;
    }
    expect(listed).toEqual(expected as [string, number][]);
  }
  // and one by one, through the other instance than the list above
  for (const r of ranked.slice(0, 20)) expect((await a.request("GET", `${path}/subscribers/${encodeURIComponent(r.email)}`, { key })).body.data.subscriber.position).toBe(expected.findIndex(([e]) => e === r.email) + 1);

  // the counters the triggers keep
  const confirmed = (await rows<{ n: number }>(sql`SELECT count(*) AS n FROM subscribers WHERE waitlist_id = ${w.id} AND seq IS NOT NULL`))[0].n;
  expect((await rows<{ n: number }>(sql`SELECT subscribers_count AS n FROM waitlists WHERE id = ${w.id}`))[0].n).toBe(confirmed);
  const rankCounts = await rows(sql`SELECT level, points, bucket, count FROM rank_counts WHERE waitlist_id = ${w.id} AND count <> 0 ORDER BY level, points, bucket`);
  const recount = await rows(
    sql`SELECT l.level, s.points, CASE WHEN l.level = 63 THEN 0 WHEN l.level = 16 THEN s.ranked_seq / 65536 ELSE s.ranked_seq / 256 END AS bucket, count(*) AS count
        FROM subscribers s CROSS JOIN (SELECT 8 AS level UNION ALL SELECT 16 UNION ALL SELECT 63) AS l
        WHERE s.waitlist_id = ${w.id} AND s.ranked_seq IS NOT NULL GROUP BY l.level, s.points, bucket ORDER BY l.level, s.points, bucket`,
  );
  expect(rankCounts).toEqual(recount);
  expect(ranked.length).toBeGreaterThan(100);

  // every referrer's count is its credited referrals
  const counts = await rows(
    sql`SELECT s.email, s.referral_count AS counted, (SELECT count(*) FROM referrals r WHERE r.referrer_id = s.id AND r.credited) AS credited
        FROM subscribers s WHERE s.waitlist_id = ${w.id} AND s.referral_count <> (SELECT count(*) FROM referrals r WHERE r.referrer_id = s.id AND r.credited)`,
  );
  expect(counts).toEqual([]);
  expect((await rows<{ n: number }>(sql`SELECT count(*) AS n FROM referrals WHERE waitlist_id = ${w.id} AND credited`))[0].n).toBeGreaterThan(20);

  // each webhook event delivered once, and each outbox row sent once
  const mine = hooks.deliveries.filter((d) => d.body?.waitlist?.key === w.key);
  const perId = new Map<string, number>();
  for (const d of mine) perId.set(d.body.id, (perId.get(d.body.id) ?? 0) + 1);
  expect([...perId].filter(([, n]) => n !== 1)).toEqual([]);
  // one endpoint (the settings' webhook): a row per event
  const outbox = await rows<{ event_id: string; attempts: number }>(sql`SELECT event_id, attempts FROM outbox WHERE waitlist_id = ${w.id} AND kind = 'webhook' ORDER BY id`);
  expect(outbox.filter((o) => o.attempts !== 1)).toEqual([]);
  expect([...perId.keys()].sort()).toEqual(outbox.map((o) => o.event_id).sort());
}, 120_000);
