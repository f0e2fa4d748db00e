// `BENCH_BIN=dist/waitlist bun bench/memory.ts`: the server under the sign-up load and then each read route of
// issue 19's table, each with its share of the ceiling, its p99 and the highest RSS of 100 ms samples: how the
// memory budget (src/memory.ts) trades memory for speed. `npm run bench` reports only the highest of all.
import { BENCH_KEY } from "./seed";
import { fmt, rssMb, sampledLoad, signUpLoad, standalone, table, type LoadResult } from "./lib";
import { publishPage, readRoutes } from "./reads";

await standalone("memory", async ({ n, duration, base, server }) => {
  const rows: string[][] = [["server idle", "-", "-", `${fmt(await rssMb(server.pid), 0)} MB`]];
  const row = (name: string, { result, rss }: { result: LoadResult; rss: number }) => rows.push([name, fmt(result.rps / base.rps, 3), fmt(result.p99, 0), `${fmt(rss, 0)} MB`]);
  row("sign-up", await sampledLoad(server.pid, signUpLoad(server.url, duration)));
  await publishPage(server.url);
  for (const route of readRoutes(n).filter((r) => !r.deep)) row(route.name, await sampledLoad(server.pid, { url: `${server.url}${route.path}`, headers: { "x-api-key": BENCH_KEY }, duration }));
  console.log(table(["load @64 conns", "x ceiling", "p99 ms", "highest RSS"], rows));
});
