// Position reads must not grow with the list (DESIGN §7): GET subscriber and list-by-position latency at
// 10k and 1M subscribers, beside a bare Bun.serve route measured in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_KEY, seed, WAITLIST_KEY } from "./seed";
import { fmt, startServer, timeCalls } from "./lib";

const READS = Number(process.env.BENCH_READS ?? 2000);
const SIZES = (process.env.BENCH_SIZES ?? "10000,1000000").split(",").map(Number);

async function ceiling() {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({}) });
  const url = `http://127.0.0.1:${server.port}/`;
  const t = await timeCalls(READS, () => fetch(url).then((r) => r.text()));
  server.stop(true);
  return t;
}

export async function positionsBench() {
  const rows: string[][] = [];
  const base = await ceiling();
  rows.push(["bare Bun.serve route (ceiling)", "-", fmt(base.p50), fmt(base.p99), "1.00"]);
  const results: Record<number, { get: number; list: number }> = {};
  for (const n of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), "bench-pos-"));
    const dbUrl = `file:${join(dir, "bench.db")}`;
    const t0 = performance.now();
    await seed(dbUrl, n);
    console.error(`seeded ${n} subscribers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const server = await startServer(dbUrl);
    const headers = { "x-api-key": BENCH_KEY };
    // warm up the page cache and the JIT
    for (let i = 0; i < 200; i++) await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${1 + ((i * 7919) % n)}`, { headers }).then((r) => r.text());
    const get = await timeCalls(READS, async (i) => {
      const id = 1 + ((i * 104_729) % n);
      const r = await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${id}`, { headers });
      const body = (await r.json()) as any;
      if (typeof body?.data?.subscriber?.position !== "number") throw new Error(`no position: ${JSON.stringify(body).slice(0, 200)}`);
    });
    const pages = Math.floor(n / 100);
    const list = await timeCalls(Math.min(READS, 500), async (i) => {
      const page = 1 + ((i * 7_919) % pages);
      const r = await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers?sort_by=position&sort_dir=asc&limit=100&page=${page}`, { headers });
      const body = (await r.json()) as any;
      if (body?.data?.subscribers?.[0]?.position !== (page - 1) * 100 + 1) throw new Error(`wrong page ${page}: ${JSON.stringify(body).slice(0, 200)}`);
    });
    results[n] = { get: get.p50, list: list.p50 };
    rows.push([`GET subscriber (position) @ ${n.toLocaleString("en")}`, String(READS), fmt(get.p50), fmt(get.p99), fmt(get.p50 / base.p50, 2)]);
    rows.push([`list by position, 100/page @ ${n.toLocaleString("en")}`, String(Math.min(READS, 500)), fmt(list.p50), fmt(list.p99), fmt(list.p50 / base.p50, 2)]);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const [small, large] = [SIZES[0], SIZES[SIZES.length - 1]];
  if (small !== large) {
    rows.push([`GET subscriber p50 ratio ${large.toLocaleString("en")} / ${small.toLocaleString("en")}`, "-", "-", "-", fmt(results[large].get / results[small].get, 2)]);
    rows.push([`list page p50 ratio ${large.toLocaleString("en")} / ${small.toLocaleString("en")}`, "-", "-", "-", fmt(results[large].list / results[small].list, 2)]);
  }
  return { header: ["measure", "requests", "p50 ms", "p99 ms", "x ceiling p50"], rows };
}

if (import.meta.main) {
  const { header, rows } = await positionsBench();
  console.log(table(header, rows));
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
