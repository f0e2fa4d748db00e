// `bun bench/signup.ts [N]`: durable sign-up alone against the ceiling, with the server's CPU time per sign-up
// (main thread and whole process, from /proc) and its highest RSS under the load. BENCH_BIN=dist/waitlist measures
// the binary; BENCH_PROFILE=1 writes a CPU profile under bench/profiles/. The full figures come from `npm run bench`.
import { ceilingRow, fmt, sampledLoad, signUpLoad, standalone, table } from "./lib";

await standalone("signup", async ({ n, duration, base, server }) => {
  const { result: r, rss, cpu } = await sampledLoad(server.pid, signUpLoad(server.url, duration));
  const per = (k: "main" | "all") => fmt((1e6 * cpu[k]) / r.total, 0);
  console.log(
    table(["measure", "value", "p50 ms", "p99 ms", "x ceiling"], [
      ceilingRow(base),
      [`server RSS, highest under the load`, `${fmt(rss, 0)} MB`, "-", "-", "-"],
      [`server CPU per sign-up, us (main thread / process)`, `${per("main")} / ${per("all")}`, "-", "-", "-"],
      [`sign-up @64 conns, ${n.toLocaleString("en")}${r.non2xx + r.errors ? ` (${r.non2xx + r.errors} failed)` : ""}`, `${fmt(r.rps, 0)} req/s`, fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.rps / base.rps, 3)],
    ]),
  );
});
