// PostgreSQL restarting under load (issue 18 item 4): while it is down, requests answer 503 (never 500) and
// /healthz reports it; once it is back, the service recovers by itself and no acknowledged sign-up is lost.
// The test has a PostgreSQL server of its own (stopped and started on the same data), in every pass.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { dedicatedPg, type DedicatedPg } from "./support/pg";
import { startServer, until, type TestServer } from "./support/server";

let pg: DedicatedPg;
let s: TestServer;
beforeAll(async () => {
  pg = await dedicatedPg();
  s = await startServer({ dbUrl: pg.url, env: { RATE_LIMITS: "off" } });
});
afterAll(async () => {
  await s?.stop();
});

type Phase = "before" | "down" | "after";
interface Answer {
  phase: Phase;
  email: string;
  status: number;
  body: string;
}

/** A request that does not answer within 20 s counts as status 0. */
async function call(method: string, path: string, key?: string, body?: unknown): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(s.url + path, {
      method,
      headers: { ...(key ? { "x-api-key": key } : {}), ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: "no answer within 20 s" };
  }
}

test("PostgreSQL restarting under load: 503s and an unhealthy /healthz meanwhile, never a 500; recovery by itself; no acknowledged sign-up lost", async () => {
  const { key } = await s.account("business");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Outage" } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;

  let phase: Phase = "before";
  let running = true;
  let n = 0;
  const answers: Answer[] = [];
  // sign-ups only: the list reads in between are answers too, and counted here they let the waits below end short of their sign-ups
  const count = (p: Phase, status: number) => answers.filter((x) => x.phase === p && x.status === status && x.email !== "(list)").length;
  const clients = Array.from({ length: 8 }, async (_, c) => {
    while (running) {
      const email = `c${c}-${n++}@example.com`;
      const at = phase;
      const r = await call("POST", `${path}/sign-up`, key, { email });
      answers.push({ phase: at, email, status: r.status, body: r.text.slice(0, 300) });
      // reads go on too: the list is the heaviest one
      if (n % 5 === 0) {
        const l = await call("GET", `${path}/subscribers?limit=10`, key);
        answers.push({ phase: at, email: "(list)", status: l.status, body: l.text.slice(0, 300) });
      }
      if (r.status !== 200) await Bun.sleep(20); // do not spin while refused
    }
  });

  await until(() => count("before", 200) >= 40, 20_000, "40 sign-ups before the outage");
  phase = "down";
  await pg.stop();
  const health = await until(async () => {
    const r = await call("GET", "/healthz");
    return r.status === 503 ? r : null;
  }, 10_000, "/healthz to report the outage");
  expect(JSON.parse(health.text)).toEqual({ status: "unavailable" });
  await until(() => count("down", 503) >= 20, 20_000, "20 sign-ups refused with 503 during the outage");

  await pg.start();
  await until(async () => (await call("GET", "/healthz")).status === 200, 30_000, "/healthz to recover");
  phase = "after";
  await until(() => count("after", 200) >= 40, 30_000, "40 sign-ups after the restart");
  running = false;
  await Promise.all(clients);

  // never a 500 (nor a hang): 200, or 503 while the database was away (a request in flight at the stop included)
  const odd = answers.filter((x) => x.status !== 200 && x.status !== 503);
  expect(odd.slice(0, 10)).toEqual([]);
  // after the restart nothing is refused any more (a request sent just before /healthz recovered may still be)
  expect(answers.filter((x) => x.phase === "after" && x.status !== 200).length).toBeLessThanOrEqual(8);
  expect(s.proc.exitCode).toBeNull();

  // every sign-up answered 200 is in the database
  const db = await openDatabase({ url: pg.url, poolSize: 1 });
  try {
    const stored = new Set((await db.rows<{ email: string }>(sql`SELECT email FROM subscribers WHERE waitlist_id = ${w.id}`)).map((r) => r.email));
    const acknowledged = answers.filter((x) => x.status === 200 && x.email !== "(list)").map((x) => x.email);
    expect(acknowledged.filter((e) => !stored.has(e))).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(80);
    // and the counters the triggers keep agree with the rows
    const total = (await s.request("GET", `${path}/stats`, { key })).body.data.subscribers_total;
    expect(total).toBe(stored.size);
  } finally {
    await db.close();
  }
}, 120_000);
