// PostgreSQL writes scale with instances (issue 43 item 5): writes lock per waitlist, not behind one lock of the
// whole database. A waitlist's row held locked from another session for 5 s delays no sign-up to another waitlist
// through either instance, and the held waitlist's own sign-ups wait, then succeed. A mixed load of two instances
// over several waitlists deadlocks nowhere (pg_stat_database.deadlocks, read once the instances have exited and
// their sessions' statistics are flushed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { engine, startServer, until, type Response, type TestServer } from "./support/server";

const pgOnly = test.skipIf(engine !== "pg");

let a: TestServer;
let b: TestServer;
let psql: SQL;
let key: string;
beforeAll(async () => {
  if (engine !== "pg") return;
  a = await startServer({ env: { RATE_LIMITS: "off" } });
  b = await startServer({ dbUrl: a.dbUrl, env: { RATE_LIMITS: "off" } });
  psql = new SQL(a.dbUrl, { max: 2 });
  ({ key } = await a.account("business"));
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await psql?.close({ timeout: 1 });
});

const createWaitlist = async (via: TestServer, body: Record<string, unknown> = {}) => {
  const r = await via.request("POST", "/api/v1/waitlists", { key, body: { name: `Locks ${Math.random().toString(36).slice(2, 10)}`, ...body } });
  expect(r.status).toBe(201);
  return r.body.data.waitlist as { id: string; key: string };
};

const p99 = (ms: number[]) => [...ms].sort((x, y) => x - y)[Math.ceil(ms.length * 0.99) - 1];

pgOnly("a waitlist's row locked for 5 s from another session delays no sign-up to another waitlist, through either instance; its own wait, then succeed", async () => {
  const held = await createWaitlist(a);
  const free = await createWaitlist(b);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = psql.begin(async (tx) => {
    await tx`SELECT 1 FROM waitlists WHERE id = ${held.id} FOR UPDATE`;
    locked();
    await released;
  });
  await isLocked;
  const heldAt = performance.now();
  // the held waitlist's own sign-ups, through both instances: they wait for the lock
  const waiting = [a, b, a, b].map((via, i) =>
    via.request("POST", `/api/v1/waitlist/${held.key}/sign-up`, { key, body: { email: `held${i}@example.com` } }).then((r) => ({ r, at: performance.now() })),
  );
  // meanwhile another waitlist's sign-ups, 8 at a time through both instances, for 4.5 s
  const answers: Response[] = [];
  const latencies: number[] = [];
  let n = 0;
  await Promise.all(
    Array.from({ length: 8 }, async (_, client) => {
      while (performance.now() - heldAt < 4_500) {
        const via = client % 2 ? a : b;
        const t0 = performance.now();
        const r = await via.request("POST", `/api/v1/waitlist/${free.key}/sign-up`, { key, body: { email: `free${n++}@example.com` } });
        latencies.push(performance.now() - t0);
        answers.push(r);
      }
    }),
  );
  const stillHeld = performance.now() - heldAt;
  release();
  await holding;
  expect(stillHeld).toBeLessThan(5_000 + 1_000);
  expect(answers.length).toBeGreaterThan(50);
  expect(answers.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.text.slice(0, 200)}`)).toEqual([]);
  expect(p99(latencies)).toBeLessThan(250);
  // the held waitlist's sign-ups answered only once the lock was let go, every one of them a new subscriber
  for (const { r, at } of await Promise.all(waiting)) {
    expect(r.status).toBe(200);
    expect(r.body.is_new_sign_up).toBe(true);
    expect(at - heldAt).toBeGreaterThan(4_000);
  }
  const [{ n: signedUp }] = await psql<{ n: string }[]>`SELECT count(*)::text AS n FROM subscribers WHERE waitlist_id = ${held.id}`;
  expect(Number(signedUp)).toBe(4);
});

pgOnly("a mixed load of two instances over several waitlists (referred sign-ups, point changes, deletes, page views) deadlocks nowhere", async () => {
  const deadlocks = async () => {
    await psql`SELECT pg_stat_clear_snapshot()`;
    const [row] = await psql<{ n: string }[]>`SELECT deadlocks::text AS n FROM pg_stat_database WHERE datname = current_database()`;
    return Number(row.n);
  };
  const before = await deadlocks();
  const lists = await Promise.all([a, b, a].map((via) => createWaitlist(via, { referral_rewards: { enabled: true } })));
  const codes: string[][] = lists.map(() => []);
  const emails: string[][] = lists.map(() => []);
  const unexpected: string[] = [];
  const expectStatus = (what: string, r: Response, ok: number[]) => void (ok.includes(r.status) || unexpected.push(`${what}: ${r.status} ${r.text.slice(0, 160)}`));
  let next = 0;
  const step = async (i: number) => {
    const w = i % lists.length;
    const path = `/api/v1/waitlist/${lists[w].key}`;
    const via = i % 2 ? a : b;
    const other = via === a ? b : a;
    const referredBy = i % 3 === 0 && codes[w].length ? codes[w][(i * 7) % codes[w].length] : undefined;
    const email = `m${i}@example.com`;
    const r = await via.request("POST", `${path}/sign-up`, { key, body: { email, metadata: referredBy ? { referred_by: referredBy } : {} } });
    expectStatus(`sign-up ${email}`, r, [200]);
    if (r.body?.referral_code) codes[w].push(r.body.referral_code);
    emails[w].push(email);
    expectStatus("view", await other.request("POST", `${path}/log-view`, { key, body: { visitor_id: `v${i % 17}` } }), [200]);
    if (i % 4 === 1 && emails[w].length > 2) {
      const target = emails[w][(i * 5) % emails[w].length];
      expectStatus(`points ${target}`, await other.request("PUT", `${path}/subscribers/${encodeURIComponent(target)}`, { key, body: { points: (i * 37) % 300 } }), [200, 404]);
    }
    if (i % 7 === 3 && emails[w].length > 4) {
      const target = emails[w][(i * 3) % emails[w].length];
      expectStatus(`delete ${target}`, await via.request("DELETE", `${path}/subscribers/${encodeURIComponent(target)}`, { key }), [200, 204, 404]);
    }
  };
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < 360; i = next++) await step(i);
    }),
  );
  expect(unexpected).toEqual([]);
  // a session's statistics reach pg_stat_database when it ends: the instances' pools end with them
  await b.stop();
  await a.stop();
  await until(async () => (await psql`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'waitlist'`).length === 0, 10_000, "the instances' sessions ended");
  const after = await deadlocks();
  expect(after).toBe(before);
});
