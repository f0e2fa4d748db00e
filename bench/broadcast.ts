// `bun bench/broadcast.ts [N] [--pg]`: sign-ups while a broadcast to every one of N subscribers (default 100,000) is
// queued and sent (issue 45: their p99 stays under twice the idle p99). The server sends to a local SMTP server that
// takes and drops every message, at MAIL_RATE_PER_MINUTE=$BENCH_MAIL_RATE (default 600, the server's own default;
// far more makes the queueing job and the sender work all the time). Sign-ups at 16 connections, in rounds: idle before, while sending, idle after the
// broadcast is cancelled; the figures are each phase's median p99, and the ratio to the idle rounds (bracketing the
// sending ones, so the machine's drift does not favour either side).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { BENCH_KEY, seed, WAITLIST_KEY } from "./seed";
import { ceiling, ceilingRow, fmt, load, median, signUpLoad, startServer, table, warmUp, type LoadResult } from "./lib";
import { startPg } from "./pg";

const args = process.argv.slice(2);
const usePg = args.includes("--pg");
const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 16;
/** Broadcast emails a minute (BENCH_MAIL_RATE): the default 600, or far more to make the queueing job write all the time. */
const RATE = process.env.BENCH_MAIL_RATE ?? "600";

/** An SMTP server that accepts every message and keeps only their count. */
async function sink() {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      stream.on("data", () => {});
      stream.on("end", () => {
        received++;
        callback();
      });
    },
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, received: () => received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const base = await ceiling(SECONDS);
const dir = mkdtempSync(join(tmpdir(), "bench-broadcast-"));
const pg = usePg ? await startPg() : null;
const smtp = await sink();
try {
  const dbUrl = pg ? await pg.database("broadcast") : `file:${join(dir, "bench.db")}`;
  await seed(dbUrl, n);
  const server = await startServer(dbUrl, { SMTP_URL: smtp.url, MAIL_FROM: "Bench <bench@bench.example>", MAIL_RATE_PER_MINUTE: RATE });
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}${path}`, { method, headers: { "x-api-key": BENCH_KEY, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json()) as any;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const opts = { ...signUpLoad(server.url, SECONDS), connections: CONNECTIONS };
    await warmUp(opts);
    const rounds = async (what: string) => {
      const out: LoadResult[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const r = await load(opts);
        if (r.non2xx || r.errors) throw new Error(`${what} sign-ups failed: ${JSON.stringify(r)}`);
        out.push(r);
      }
      return out;
    };
    const before = await rounds("idle");
    const b = (await api("POST", "/broadcasts", { subject: "News for {{first_name}}", body_markdown: "Hi {{first_name}}, you are #{{position}}. {{referral_link}}" })).data.broadcast;
    await api("POST", `/broadcasts/${b.id}/send`);
    // the job's first batches are in: the broadcast is queued and leaving
    const deadline = Date.now() + 30_000;
    while ((await api("GET", `/broadcasts/${b.id}`)).data.broadcast.recipients === 0) {
      if (Date.now() > deadline) throw new Error("the broadcast did not start within 30 s");
      await Bun.sleep(200);
    }
    const sentBefore = smtp.received();
    const t0 = Date.now();
    const during = await rounds("sending");
    const seconds = (Date.now() - t0) / 1000;
    const progress = (await api("GET", `/broadcasts/${b.id}`)).data.broadcast;
    const emailsPerSecond = (smtp.received() - sentBefore) / seconds;
    await api("POST", `/broadcasts/${b.id}/cancel`);
    const after = await rounds("idle again");

    const idle = [...before, ...after];
    const p99 = (rs: LoadResult[]) => median(rs.map((r) => r.p99));
    const rps = (rs: LoadResult[]) => median(rs.map((r) => r.rps));
    const row = (what: string, rs: LoadResult[]) => [what, `${fmt(rps(rs), 0)} req/s`, fmt(median(rs.map((r) => r.p50)), 1), fmt(p99(rs), 1), fmt(rps(rs) / base.rps, 3)];
    console.log(`Sign-ups @${CONNECTIONS} conns while a broadcast to ${n.toLocaleString("en")} subscribers is queued and sent at ${RATE} a minute${pg ? " (PostgreSQL)" : " (embedded)"}, ${ROUNDS} rounds of ${SECONDS} s per phase`);
    console.log(
      table(["measure", "value", "p50 ms", "p99 ms", "x ceiling"], [
        ceilingRow(base),
        row("sign-ups, idle (before and after)", idle),
        row("sign-ups, while the broadcast is queued and sent", during),
        ["p99 while sending / idle p99 (under 2 is the issue's bar)", fmt(p99(during) / p99(idle), 2), "-", "-", "-"],
        ["broadcast emails handed to SMTP meanwhile", `${fmt(emailsPerSecond, 0)} /s`, "-", "-", "-"],
        ["recipients queued when the sending rounds ended", progress.recipients.toLocaleString("en"), "-", "-", "-"],
      ]),
    );
  } finally {
    await server.stop();
  }
} finally {
  await smtp.close();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}
