// `bun bench/ab.ts [--n N] [--route PATH] [--rounds R] [--seconds S] [--pg] A B [C...]`: two or more servers (each a
// binary's path, or `src` for the source, either followed by `?NAME=value&...` for variables of its own) on
// databases seeded alike (the landing page published), loaded in turn, round after round, with short loads (sign-up
// unless --route names a GET path). On this noisy machine a slow minute then falls on every variant
// alike: each round's figure is compared with the first variant's in the same round, and the mean and median of
// those paired ratios are printed, with the CPU time per request of each server's main thread and whole process.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_KEY, seed } from "./seed";
import { cpuTimes, failedLoad, fmt, load, median, signUpLoad, startServer, table, warmUp } from "./lib";
import { startPg } from "./pg";
import { publishPage } from "./reads";

function parse(argv: string[]) {
  const opts = { n: 10_000, route: "", rounds: 10, seconds: 2, pg: false, variants: [] as string[] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--n") opts.n = Number(argv[++i]);
    else if (flag === "--route") opts.route = argv[++i];
    else if (flag === "--rounds") opts.rounds = Number(argv[++i]);
    else if (flag === "--seconds") opts.seconds = Number(argv[++i]);
    else if (flag === "--pg") opts.pg = true;
    else opts.variants.push(flag);
  }
  if (opts.variants.length < 2 || ![opts.n, opts.rounds, opts.seconds].every((v) => Number.isInteger(v) && v > 0)) {
    console.error("usage: bun bench/ab.ts [--n N] [--route PATH] [--rounds R] [--seconds S] [--pg] A B [C...] (each a binary's path, or src)");
    process.exit(2);
  }
  return opts;
}

const opts = parse(process.argv.slice(2));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

const dir = mkdtempSync(join(tmpdir(), "bench-ab-"));
const servers: Awaited<ReturnType<typeof startServer>>[] = [];
// --pg: each variant on a database of its own on one PostgreSQL server (fsync on, bench/pg.ts)
const pg = opts.pg ? await startPg() : null;
try {
  for (const [i, variant] of opts.variants.entries()) {
    const dbUrl = pg ? await pg.database(`v${i}`) : `file:${join(dir, `v${i}.db`)}`;
    await seed(dbUrl, opts.n);
    // `src?NAME=value&...` or `path?NAME=value`: that server alone also gets those variables
    const [what, query] = variant.split("?");
    servers.push(await startServer(dbUrl, Object.fromEntries(new URLSearchParams(query ?? "")), what === "src" ? undefined : what));
    await publishPage(servers[i].url);
  }
  const loadOf = (url: string, duration: number) => (opts.route ? { url: url + opts.route, headers: { "x-api-key": BENCH_KEY }, duration } : signUpLoad(url, duration));
  for (const server of servers) await warmUp(loadOf(server.url, 1));
  const rps: number[][] = servers.map(() => []);
  const cpu: number[][] = servers.map(() => []);
  const cpuAll: number[][] = servers.map(() => []);
  const p99: number[][] = servers.map(() => []);
  for (let round = 0; round < opts.rounds; round++) {
    // each round starts with the next variant, so none always runs first
    for (let k = 0; k < servers.length; k++) {
      const i = (round + k) % servers.length;
      const before = cpuTimes(servers[i].pid);
      const result = await load(loadOf(servers[i].url, opts.seconds));
      const after = cpuTimes(servers[i].pid);
      if (result.non2xx || result.errors) throw failedLoad(opts.variants[i], result, servers[i]);
      rps[i].push(result.rps);
      p99[i].push(result.p99);
      cpu[i].push((1e6 * (after.main - before.main)) / result.total);
      cpuAll[i].push((1e6 * (after.all - before.all)) / result.total);
    }
  }
  const what = opts.route ? `GET ${opts.route}` : "sign-up";
  console.log(`${what} @64 conns, ${opts.n.toLocaleString("en")} subscribers${pg ? " on PostgreSQL" : ""}, ${opts.rounds} rounds of ${opts.seconds} s each`);
  console.log(
    table(
      ["variant", "mean req/s", "x first (mean / median of rounds)", "p99 ms (median)", "CPU per request, median: main thread / process"],
      opts.variants.map((variant, i) => {
        const paired = rps[i].map((value, round) => value / rps[0][round]);
        return [variant, fmt(mean(rps[i]), 0), `${fmt(mean(paired))} / ${fmt(median(paired))}`, fmt(median(p99[i]), 1), `${fmt(median(cpu[i]), 1)} / ${fmt(median(cpuAll[i]), 1)} us`];
      }),
    ),
  );
} finally {
  for (const server of servers) await server.stop();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}
