// The soak (issue 10): minutes of steady mixed traffic (sign-ups, reads, views, form posts) against the
// compiled binary, its webhooks going to a receiver that fails 20% of the time. Passes when no request
// fails, memory stays flat, and every webhook is delivered in the end. Run by `npm run bench`
// (BENCH_SOAK_MINUTES, default 10; 0 skips it), or alone: `bun bench/soak.ts`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { BENCH_KEY, seed, WAITLIST_KEY } from "./seed";
import { rssMb, startServer } from "./lib";

export interface SoakResult {
  minutes: number;
  requests: number;
  failed: number;
  byKind: Record<string, number>;
  /** Average resident memory just after the warm-up (the second fifth of the run) and in the last fifth. */
  rssEarlyMb: number;
  rssLateMb: number;
  webhooksCreated: number;
  webhooksDelivered: number;
  receiverFailures: number;
  drainSeconds: number;
  ok: boolean;
}

const RATE_PER_S = 200;
const MIX: [string, number][] = [
  ["sign-up", 0.4],
  ["get subscriber", 0.3],
  ["log-view", 0.2],
  ["form post", 0.1],
];

export async function soak(minutes: number, bin: string): Promise<SoakResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-soak-"));
  const dbUrl = `file:${join(dir, "soak.db")}`;
  await seed(dbUrl, 10_000);

  // a receiver that fails one delivery in five, until the traffic stops
  let failing = true;
  let receiverFailures = 0;
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      await req.text();
      if (failing && Math.random() < 0.2) {
        receiverFailures++;
        return new Response("unavailable", { status: 503 });
      }
      return new Response("ok");
    },
  });
  const setup = createClient({ url: dbUrl });
  await setup.execute({ sql: "UPDATE waitlists SET webhook_endpoints = 1, allowed_domains = '[\"soak.example\"]'", args: [] });
  await setup.execute({
    sql: "INSERT INTO webhook_endpoints (id, waitlist_id, url, secret, created_at, updated_at) SELECT 'we_soak_' || id, id, ?, signing_secret, 0, 0 FROM waitlists",
    args: [`http://127.0.0.1:${receiver.port}/hooks`],
  });
  setup.close();

  const server = await startServer(dbUrl, { TRUST_PROXY: "true", RATE_LIMITS: "off" }, bin);
  const api = `${server.url}/api/v1/waitlist/${WAITLIST_KEY}`;
  const headers = { "x-api-key": BENCH_KEY, "content-type": "application/json" };
  let n = 0;
  const byKind: Record<string, number> = {};
  let failed = 0;
  const send = async (kind: string) => {
    const i = n++;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    let res: Response;
    if (kind === "sign-up") res = await fetch(`${api}/sign-up`, { method: "POST", headers, body: JSON.stringify({ email: `soak${i}@example.com` }) });
    else if (kind === "get subscriber") res = await fetch(`${api}/subscribers/user${1 + (i % 10_000)}%40example.com`, { headers });
    else if (kind === "log-view") res = await fetch(`${api}/log-view`, { method: "POST", headers, body: JSON.stringify({ visitor_id: `v${i % 5000}` }) });
    else
      res = await fetch(`${server.url}/s/${WAITLIST_KEY}`, {
        method: "POST",
        // a different visitor each time (the form allows 10 posts a minute per IP)
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://soak.example", accept: "application/json", "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
        body: `email=form${i}%40example.com`,
      });
    await res.arrayBuffer();
    if (res.status >= 400) failed++;
  };
  const pickKind = () => {
    let r = Math.random();
    for (const [kind, share] of MIX) if ((r -= share) < 0) return kind;
    return MIX[0][0];
  };

  const rss: { at: number; mb: number }[] = [];
  const started = performance.now();
  const end = started + minutes * 60_000;
  const inFlight = new Set<Promise<void>>();
  const sampler = setInterval(async () => rss.push({ at: performance.now() - started, mb: await rssMb(server.pid) }), 5_000);
  // a steady rate: each 100 ms tick sends its share, whatever the previous tick's answers
  while (performance.now() < end) {
    for (let k = 0; k < RATE_PER_S / 10; k++) {
      const p = send(pickKind()).catch(() => void failed++);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await Bun.sleep(100);
  }
  await Promise.all([...inFlight]);
  clearInterval(sampler);

  // the receiver recovers; retries are due 30 s to 24 h later, so the schedule is brought forward
  failing = false;
  const drainStart = performance.now();
  const db = createClient({ url: dbUrl });
  const counts = async () => {
    const r = await db.execute("SELECT count(*) AS total, sum(status = 'sent') AS sent FROM outbox WHERE kind = 'webhook'");
    return { total: Number(r.rows[0].total), sent: Number(r.rows[0].sent ?? 0) };
  };
  let c = await counts();
  while (c.sent < c.total && performance.now() - drainStart < 120_000) {
    await db.execute("UPDATE outbox SET next_attempt_at = 0 WHERE kind = 'webhook' AND status = 'pending'");
    await Bun.sleep(1_000);
    c = await counts();
  }
  db.close();
  await server.stop();
  receiver.stop(true);
  rmSync(dir, { recursive: true, force: true });

  const average = (from: number, to: number) => {
    const xs = rss.filter((s) => s.at >= from && s.at < to).map((s) => s.mb);
    return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  };
  const fifth = (minutes * 60_000) / 5;
  const result = {
    minutes,
    requests: n,
    failed,
    byKind,
    rssEarlyMb: average(fifth, 2 * fifth),
    rssLateMb: average(4 * fifth, 5 * fifth + 1),
    webhooksCreated: c.total,
    webhooksDelivered: c.sent,
    receiverFailures,
    drainSeconds: (performance.now() - drainStart) / 1000,
  };
  return { ...result, ok: failed === 0 && c.sent === c.total && result.rssLateMb <= result.rssEarlyMb * 1.1 };
}

if (import.meta.main) {
  const minutes = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
  console.log(JSON.stringify(await soak(minutes, join(import.meta.dir, "..", "dist", "waitlist")), null, 2));
}
