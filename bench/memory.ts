// `BENCH_BIN=dist/waitlist bun bench/memory.ts`: the server under the sign-up load and then each read route of
// issue 19's table, each with its share of the ceiling, its p99 and the highest RSS of 100 ms samples: how the
// memory budget (src/memory.ts) trades memory for speed. `npm run bench` reports only the highest of all.
import { BENCH_KEY, WAITLIST_KEY } from "./seed";
import { fmt, load, rssMb, standalone, table } from "./lib";
import { publishPage, readRoutes } from "./reads";

await standalone("memory", async ({ n, duration, base, server }) => {
  const rows: string[][] = [["server idle", "-", "-", `${fmt(await rssMb(server.pid), 0)} MB`]];
  const sampled = async (name: string, opts: Parameters<typeof load>[0]) => {
    await load({ ...opts, duration: 1 });
    let peak = 0;
    const sampler = setInterval(() => void rssMb(server.pid).then((mb) => (peak = Math.max(peak, mb)), () => {}), 100);
    try {
      const r = await load(opts);
      rows.push([name, fmt(r.rps / base.rps, 3), fmt(r.p99, 0), `${fmt(peak, 0)} MB`]);
    } finally {
      clearInterval(sampler);
    }
  };
  await sampled("sign-up", { url: `${server.url}/api/v1/waitlist/${WAITLIST_KEY}/sign-up`, method: "POST", headers: { "x-api-key": BENCH_KEY, "content-type": "application/json" }, emailBody: true, duration });
  await publishPage(server.url);
  for (const route of readRoutes(n).filter((r) => !r.deep)) await sampled(route.name, { url: `${server.url}${route.path}`, headers: { "x-api-key": BENCH_KEY }, duration });
  console.log(table(["load @64 conns", "x ceiling", "p99 ms", "highest RSS"], rows));
});
