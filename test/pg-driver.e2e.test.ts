// PostgreSQL's driver, Bun's own SQL client, as the service opens it (src/db/pg/open.ts), after a lost connection:
// the queries in flight or queued on it fail at once as "database unavailable" (answered 503), and the next query
// gets a new connection and its answer promptly, well within the connect timeout (10 s). postgres.js 3.4.9, the
// driver before it, never sent its startup message on a connection reconnected after its socket closed with a
// write waiting (queries waited out the connect timeout, again and again), or wrote to the closed socket and ended
// the process (docs/decisions.md, "Issue 43 item 6"). The connections go through a proxy the test cuts.
import { SQL } from "bun";
import { afterEach, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import net from "node:net";
import { openDatabase, type Db } from "../src/db/open";
import { isDatabaseUnavailable } from "../src/db/errors";
import { scratchPgUrl } from "./support/pg";

/** A TCP proxy to PostgreSQL: `cut()` closes every connection through it, as a lost network or a crash would. */
async function proxy(target: URL) {
  const open = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("error", () => {});
      s.on("close", () => (open.delete(s), client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target.href);
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.href,
    connections: () => connections,
    cut: () => open.forEach((s) => s.destroy()),
    close: () => (open.forEach((s) => s.destroy()), new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** The service's Db on a pool of one connection, through a proxy. */
async function pooled(): Promise<{ db: Db; link: Awaited<ReturnType<typeof proxy>> }> {
  const link = await proxy(new URL(await scratchPgUrl()));
  cleanup.push(() => link.close());
  const db = await openDatabase({ url: link.url, poolSize: 1 });
  cleanup.push(() => db.close());
  return { db, link };
}

/** How a query ended: its answer, "unavailable", "failed: ..." or "no answer" after `ms`. */
const outcome = <T>(p: Promise<T>, ms = 3_000): Promise<T | string> =>
  Promise.race([
    p.then(
      (value) => value,
      (err) => (isDatabaseUnavailable(err) ? "unavailable" : `failed: ${(err as Error).message}`),
    ),
    Bun.sleep(ms).then(() => "no answer"),
  ]);

const one = async (db: Db, n: number) => (await db.rows<{ n: number }>(sql`SELECT ${n}::int AS n`))[0]?.n;

test("a connection lost with a query in flight and others queued: they fail as unavailable, the next query answers at once", async () => {
  const { db, link } = await pooled();
  expect(await one(db, 1)).toBe(1);
  const before = link.connections();
  for (let round = 0; round < 3; round++) {
    // each outcome is taken as the query starts: a rejection left unhandled meanwhile would fail the test
    const inFlight = outcome(db.rows(sql`SELECT pg_sleep(2)`));
    const queued = [2, 3].map((n) => outcome(one(db, n)));
    await Bun.sleep(100);
    link.cut();
    expect(await Promise.all([inFlight, ...queued])).toEqual(["unavailable", "unavailable", "unavailable"]);
    expect(await outcome(one(db, 4))).toBe(4);
  }
  expect(link.connections() - before).toBe(3);
}, 30_000);

test("a connection lost as a query is sent: it fails as unavailable, the next query answers at once", async () => {
  const { db, link } = await pooled();
  expect(await one(db, 1)).toBe(1);
  for (let round = 0; round < 3; round++) {
    // the query's bytes are on their way (or still waiting) as the connection closes
    const lost = outcome(one(db, 2));
    link.cut();
    expect([2, "unavailable"]).toContain(await lost);
    expect(await outcome(one(db, 3))).toBe(3);
  }
}, 30_000);

test("a connection lost inside a transaction: the transaction fails as unavailable, writes nothing, and the next one commits", async () => {
  const { db, link } = await pooled();
  await db.exec(sql`CREATE TABLE lost_tx (n int)`);
  const failed = db.tx(async (tx) => {
    await tx.exec(sql`INSERT INTO lost_tx VALUES (1)`);
    link.cut();
    await tx.exec(sql`INSERT INTO lost_tx VALUES (2)`);
  });
  expect(await outcome(failed)).toBe("unavailable");
  expect(await outcome(db.tx((tx) => tx.exec(sql`INSERT INTO lost_tx VALUES (3)`)))).toEqual({ changed: 1 });
  expect(await db.rows(sql`SELECT n FROM lost_tx ORDER BY n`)).toEqual([{ n: 3 }]);
}, 30_000);

test("the server ending the session (57P01, as a restart does): unavailable, and the next query answers at once", async () => {
  const { db } = await pooled();
  const [{ pid }] = await db.rows<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
  const admin = new SQL(await scratchPgUrl(), { max: 1 });
  cleanup.push(() => admin.close());
  const inFlight = outcome(db.rows(sql`SELECT pg_sleep(2)`));
  await Bun.sleep(100);
  await admin`SELECT pg_terminate_backend(${pid})`;
  expect(await inFlight).toBe("unavailable");
  // the session's FATAL error arrives before its socket closes: a query sent in between fails as unavailable too
  expect([5, "unavailable"]).toContain(await outcome(one(db, 5)));
  expect(await outcome(one(db, 6))).toBe(6);
}, 30_000);

test("int8 and numeric come back as numbers, through the Store and the builder", async () => {
  const { db } = await pooled();
  const [row] = await db.rows<{ c: unknown; s: unknown; big: unknown }>(sql`SELECT count(*) AS c, sum(x) AS s, ${2 ** 40}::bigint AS big FROM (VALUES (1.5), (2)) AS t(x)`);
  expect(row).toEqual({ c: 2, s: 3.5, big: 2 ** 40 });
  const [{ n }] = await db.rows<{ n: unknown }>(sql`SELECT NULL::bigint AS n`);
  expect(n).toBeNull();
  // the builder's bigint columns map their own
  await db.insert(db.t.accounts).values({ id: "a1", username: "a1", plan: "business", createdAt: 2 ** 41 });
  expect(await db.select({ at: db.t.accounts.createdAt }).from(db.t.accounts)).toEqual([{ at: 2 ** 41 }]);
}, 30_000);

test("a transaction that need not wait for the disk commits as any other: synchronous_commit stays on (db.ts TxOptions, issue 47)", async () => {
  const { db } = await pooled();
  const setting = async (tx: Db) => (await tx.rows<{ synchronous_commit: string }>(sql`SHOW synchronous_commit`))[0]!.synchronous_commit;
  expect(await db.tx(setting, { durable: false })).toBe("on");
  expect(await db.tx(setting)).toBe("on");
}, 30_000);
