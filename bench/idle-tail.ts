// `bun bench/idle-tail.ts [--pg] [N...]` (issue 47): the sign-ups' tail at a steady pace with nothing else going on, on
// lists seeded to each size N (bench/seed.ts), one after the other on the same server: whether the tail grows with the
// list alone, with no import before it. Sign-ups go in turn to the seeded waitlist and to an empty one of the same
// account, after a warm-up and with the database settled (PostgreSQL: VACUUM ANALYZE, CHECKPOINT), as bench/import.ts
// does its idle phases. BENCH_BIN, BENCH_PACE, BENCH_IDLE, BENCH_PG_FLAGS as there.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createClient } from "@libsql/client";
import { fmt, latencyStats, pacedSignUps, settlePg, startServer, table, warmUpSignUps } from "./lib";
import { startPg } from "./pg";
import { BENCH_KEY, seed, WAITLIST_KEY, WARM_WAITLIST_KEY } from "./seed";

const args = process.argv.slice(2);
const usePg = args.includes("--pg");
const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number);
if (sizes.length === 0) sizes.push(5_000, 270_000);
const PACE = Number(process.env.BENCH_PACE ?? 100);
const IDLE = Number(process.env.BENCH_IDLE ?? 2_000);
const log = (text: string) => console.error(`[idle-tail] ${text}`);

const dir = mkdtempSync(join(tmpdir(), "bench-idle-"));
const pg = usePg ? await startPg() : null;
const rows: string[][] = [];
try {
  for (const n of sizes) {
    const url = pg ? await pg.database(`idle_${n}`) : `file:${join(dir, `idle-${n}.db`)}`;
    let t = performance.now();
    await seed(url, n);
    log(`seeded ${n.toLocaleString("en")} in ${fmt((performance.now() - t) / 1000, 1)} s`);
    const server = await startServer(url, {}, process.env.BENCH_BIN);
    try {
      await warmUpSignUps(server.url, BENCH_KEY, WARM_WAITLIST_KEY);
      t = performance.now();
      if (pg) {
        const c = new SQL(url, { max: 1 });
        await settlePg(c);
        await c.close();
      } else {
        const c = createClient({ url });
        await c.execute("PRAGMA wal_checkpoint(TRUNCATE)");
        c.close();
      }
      log(`settled in ${fmt((performance.now() - t) / 1000, 1)} s`);
      for (const round of [1, 2]) {
        const { latencies, failed } = await pacedSignUps(server.url, BENCH_KEY, [WAITLIST_KEY, WARM_WAITLIST_KEY], PACE, { count: IDLE }, `${n}-${round}`);
        if (failed) throw new Error(`${failed} sign-ups failed: ${server.failures().join("\n")}`);
        for (const [key, samples] of latencies) {
          const s = latencyStats(samples);
          rows.push([`${n.toLocaleString("en")}`, `${round}`, key === WAITLIST_KEY ? "seeded" : "other", `${s.n}`, fmt(s.p50, 2), fmt(s.p90, 2), fmt(s.p99, 2), fmt(s.max, 1)]);
        }
        log(rows.slice(-2).map((r) => r.join(" ")).join(" | "));
      }
    } finally {
      await server.stop();
    }
  }
  console.log(table(["seeded rows", "round", "waitlist", "n", "p50 ms", "p90 ms", "p99 ms", "max ms"], rows));
} finally {
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}
