// `bun bench/contend.ts [N]` (issue 47, PostgreSQL): which kind of work beside them gives idle sign-ups the tail they
// have through an import's run. A list seeded to N (bench/seed.ts), settled, then the import bench's steady pace of
// sign-ups in phases: alone; beside a writer of its own connection (50 rows of ~270 bytes with two indexes on random
// keys, committed, then a rest); alone again; beside a reader (a statement busy on a core, no writes, then a rest).
// Each kind of work runs about a quarter of the time. BENCH_BIN, BENCH_PACE, BENCH_IDLE, BENCH_PG_FLAGS as elsewhere.
import { SQL } from "bun";
import { fmt, latencyStats, pacedSignUps, settlePg, startServer, table, warmUpSignUps } from "./lib";
import { startPg } from "./pg";
import { BENCH_KEY, seed, WAITLIST_KEY, WARM_WAITLIST_KEY } from "./seed";

const N = Number(process.argv[2] ?? 20_000);
const PACE = Number(process.env.BENCH_PACE ?? 100);
const IDLE = Number(process.env.BENCH_IDLE ?? 2_000);
const log = (text: string) => console.error(`[contend] ${text}`);

const pg = await startPg();
const rows: string[][] = [];
try {
  const url = await pg.database("contend");
  await seed(url, N);
  const server = await startServer(url, {}, process.env.BENCH_BIN);
  const side = new SQL(url, { max: 1 });
  try {
    await warmUpSignUps(server.url, BENCH_KEY, WARM_WAITLIST_KEY);
    await side.unsafe("CREATE TABLE scratch (a text, b text, c text)");
    await side.unsafe("CREATE INDEX ON scratch (a)");
    await side.unsafe("CREATE INDEX ON scratch (b)");
    await settlePg(side);
    const kinds: Record<string, string | null> = {
      alone: null,
      writer: "INSERT INTO scratch SELECT md5(random()::text), md5(random()::text), repeat('x', 200) FROM generate_series(1, 50)",
      "alone again": null,
      reader: "SELECT count(*) FROM generate_series(1, 300000)",
    };
    for (const [kind, statement] of Object.entries(kinds)) {
      let stop = false;
      let busy = 0;
      const started = performance.now();
      const beside = (async () => {
        while (statement && !stop) {
          const t = performance.now();
          await side.unsafe(statement);
          const took = performance.now() - t;
          busy += took;
          await Bun.sleep(took * 3);
        }
      })();
      const { latencies, failed } = await pacedSignUps(server.url, BENCH_KEY, [WAITLIST_KEY, WARM_WAITLIST_KEY], PACE, { count: IDLE }, kind.replace(/\W/g, ""));
      stop = true;
      await beside;
      if (failed) throw new Error(`${failed} sign-ups failed`);
      const share = busy / (performance.now() - started);
      const figures = [...latencies.values()].map((samples) => {
        const s = latencyStats(samples);
        return `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}`;
      });
      rows.push([kind, fmt(share, 2), ...figures]);
      log(rows.at(-1)!.join(" | "));
    }
  } finally {
    await side.close();
    await server.stop();
  }
  console.log(table(["beside the sign-ups", "its share of the time", "p50 / p99 ms, seeded waitlist", "p50 / p99 ms, the other"], rows));
} finally {
  await pg.stop();
}
