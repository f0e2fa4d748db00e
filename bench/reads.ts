// Issue 19: the launch-day reads at 64 connections, each beside the same run's bare Bun.serve ceiling. Used by
// bench/run.ts per list size; `bun bench/reads.ts [N]` alone seeds N (default 10,000) and prints just these rows
// (for profiling: `BENCH_PROFILE=1` runs the server under `bun --cpu-prof`, one profile per route in bench/profiles/).
import { BENCH_KEY, seed, WAITLIST_KEY } from "./seed";
import { fmt, load, median, startServer, table, warmLoad, warmUp, type LoadOptions, type LoadResult } from "./lib";

const API = `/api/v1/waitlist/${WAITLIST_KEY}`;

/** The reads of the table, in its order: name, path, and whether it sends the key. */
export function readRoutes(n: number) {
  const middle = Math.ceil(n / 2);
  return [
    { name: "GET /p/{slug} (published page)", path: "/p/bench", key: false },
    { name: "GET /t/{token}/live", path: `/t/t${middle}/live`, key: false },
    { name: "GET /me", path: "/api/v1/me", key: true },
    { name: "GET .../subscribers/{id}", path: `${API}/subscribers/sub${middle}`, key: true },
    { name: "GET /t/{token}", path: `/t/t${middle}`, key: false },
    { name: "GET .../subscribers?sort_by=position&limit=20", path: `${API}/subscribers?sort_by=position&sort_dir=asc&limit=20`, key: true },
    { name: "GET .../subscribers?sort_by=position&limit=20&page=5000", path: `${API}/subscribers?sort_by=position&sort_dir=asc&limit=20&page=5000`, key: true, deep: true },
  ];
}

/** The bench waitlist's landing page, published (the seed leaves it without one). */
export async function publishPage(url: string): Promise<void> {
  const headers = { "x-api-key": BENCH_KEY, "content-type": "application/json" };
  const make = await fetch(`${url}${API}/landing-page`, { method: "POST", headers, body: JSON.stringify({ headline: "Bench launch", description: "A page to read" }) });
  if (!make.ok && make.status !== 409) throw new Error(`landing page: ${make.status} ${await make.text()}`);
  const pub = await fetch(`${url}${API}/landing-page/publish`, { method: "POST", headers, body: "{}" });
  if (!pub.ok) throw new Error(`publish: ${pub.status} ${await pub.text()}`);
}

export interface ReadResult {
  name: string;
  path: string;
  result: LoadResult;
}

/** Each route: its warm-up (lib.ts warmUp), then `duration` seconds at 64 connections; a failed request fails the bench unless `tolerant` (PostgreSQL: counted). */
export async function measureReads(url: string, n: number, duration: number, tolerant = false): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  for (const route of readRoutes(n)) {
    if (route.deep && n < 5_000 * 20) continue;
    const opts = { url: `${url}${route.path}`, headers: (route.key ? { "x-api-key": BENCH_KEY } : {}) as Record<string, string>, duration };
    const check = await fetch(opts.url, { headers: opts.headers });
    if (!check.ok) throw new Error(`${route.path}: ${check.status} ${await check.text()}`);
    const result = await warmLoad(opts);
    if (!tolerant && (result.non2xx || result.errors)) throw new Error(`${route.path} load had failures: ${JSON.stringify(result)}`);
    out.push({ name: route.name, path: route.path, result });
  }
  return out;
}

/**
 * Each read at two list sizes, in turns (issue 19, flat in the list's size): both servers up, each route warmed up on
 * both, then `rounds` rounds of `seconds` at 64 connections on each, the order swapped every round. A round's ratio is
 * the small size's throughput over the large one's, seconds apart on the same machine: the machine's speed, which
 * drifts by a third within minutes here, cancels out of it. The median of the rounds, per route.
 */
export async function pairedReads(small: { url: string; n: number }, large: { url: string; n: number }, rounds: number, seconds: number) {
  const out: { name: string; ratio: number; ratios: number[] }[] = [];
  for (const route of readRoutes(large.n).filter((r) => !r.deep)) {
    const headers = (route.key ? { "x-api-key": BENCH_KEY } : {}) as Record<string, string>;
    const pathAt = (n: number) => readRoutes(n).find((r) => r.name === route.name)!.path;
    const at = (side: { url: string; n: number }) => ({ url: `${side.url}${pathAt(side.n)}`, headers, duration: seconds });
    out.push({ name: route.name, ...(await inTurns(at(small), at(large), rounds)) });
  }
  return out;
}

/**
 * One kind of load on two servers in turns (each warmed up first), `rounds` pairs with the other one first every other
 * round: each pair's throughput, small over large, and their median. A slow minute of this machine falls on both.
 */
export async function inTurns(small: LoadOptions, large: LoadOptions, rounds: number): Promise<{ ratio: number; ratios: number[] }> {
  await warmUp(small);
  await warmUp(large);
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const [first, second] = r % 2 ? [large, small] : [small, large];
    const a = await load(first);
    const b = await load(second);
    for (const x of [a, b]) if (x.non2xx || x.errors) throw new Error(`${first.url} load had failures: ${JSON.stringify(x)}`);
    ratios.push(first === small ? a.rps / b.rps : b.rps / a.rps);
  }
  return { ratio: median(ratios), ratios };
}

if (import.meta.main) {
  const { ceilingRow, standalone } = await import("./lib");
  await standalone("reads", async ({ n, duration, base, server }) => {
    await publishPage(server.url);
    const reads = await measureReads(server.url, n, duration);
    const rows = [ceilingRow(base)];
    for (const r of reads) rows.push([`${r.name}, ${n.toLocaleString("en")}`, `${fmt(r.result.rps, 0)} req/s`, fmt(r.result.p50, 1), fmt(r.result.p99, 1), fmt(r.result.rps / base.rps, 3)]);
    console.log(table(["measure", "value", "p50 ms", "p99 ms", "x ceiling"], rows));
  });
}
