// Shared bench plumbing: start the server on a database, time requests, format rows.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQL } from "bun";
import { BENCH_KEY, seed, WAITLIST_KEY, WARM_WAITLIST_KEY } from "./seed";

const ROOT = join(import.meta.dir, "..");

/**
 * The real server (src/main.ts) on `dbUrl`, rate limits off; resolves once it listens. SERVER_ENV (a JSON object)
 * adds variables for the server alone, e.g. `SERVER_ENV='{"BUN_JSC_forceRAMSize":"268435456"}'` to try a JavaScriptCore
 * option on the server and not on the load generator (docs/decisions.md, the heap's growth).
 */
export async function startServer(dbUrl: string, env: Record<string, string> = {}, bin?: string, bunArgs: string[] = []) {
  const proc = Bun.spawn([...(bin ? [bin] : [process.execPath, ...bunArgs, join(ROOT, "src", "main.ts")]), "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbUrl], {
    cwd: ROOT,
    env: { ...process.env, RATE_LIMITS: "off", LOG_LEVEL: "info", ...JSON.parse(process.env.SERVER_ENV ?? "{}"), ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("server exited");
    buffer += decoder.decode(value);
    const m = buffer.match(/"msg":"listening".*?"port":(\d+)/);
    if (m) {
      // keep draining stdout so request logs never block the server; the last few error lines and lines of failed
      // requests are kept (a load's figures only count them)
      const failures: string[] = [];
      const errors: string[] = [];
      // BENCH_SERVER_LOG=FILE: every line the server writes, to lay its own times beside the client's
      const tee = process.env.BENCH_SERVER_LOG ? Bun.file(process.env.BENCH_SERVER_LOG).writer() : null;
      (async () => {
        // a chunk may end inside a line: its end waits for the next chunk
        let rest = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
          rest = lines.pop()!;
          for (const line of lines) {
            tee?.write(line + "\n");
            if (ERROR.test(line)) errors.push(line.slice(0, 2000));
            else if (FAILED.test(line)) failures.push(line.slice(0, 500));
          }
          failures.splice(0, failures.length - 3);
          errors.splice(0, errors.length - 3);
        }
        await tee?.end();
      })();
      return { url: `http://127.0.0.1:${m[1]}`, pid: proc.pid, failures: () => [...errors, ...failures], stop: async () => (proc.kill("SIGTERM"), await proc.exited) };
    }
  }
}

/**
 * A new account on the server's database, made by the CLI (`account create`, business plan; the binary's when `bin` is
 * given) as a team would: its API key, and `api(method, path, body?)` calling the server's REST API with it (the
 * answer's `data`; a failure throws, naming the call).
 */
export function benchAccount(serverUrl: string, dbUrl: string, username: string, bin?: string) {
  const cli = Bun.spawnSync([...(bin ? [bin] : [process.execPath, join(ROOT, "src", "main.ts")]), "account", "create", "--username", username, "--plan", "business", "--json", "--db", dbUrl], { cwd: ROOT });
  if (!cli.success) throw new Error(`account create failed: ${cli.stderr.toString()}`);
  const apiKey = JSON.parse(cli.stdout.toString()).api_key as string;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${serverUrl}/api/v1${path}`, { method, headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  return { apiKey, api };
}

/** mulberry32: numbers in [0, 1) that are the same every run from the same seed (a bench's file, its choices). */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Timed samples (pacedSignUps' latencies) as their count, percentiles and slowest, in ms. */
export function latencyStats(samples: { ms: number }[]) {
  const sorted = samples.map((x) => x.ms).sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

/** The sign-ups of a waitlist compiled for good before anything is measured (warmUp), each request a new email. */
export const warmUpSignUps = (serverUrl: string, apiKey: string, waitlistKey: string) =>
  warmUp({ url: `${serverUrl}/api/v1/waitlist/${waitlistKey}/sign-up`, method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, emailBody: true, duration: 1 });

/**
 * Leaves a PostgreSQL database nothing of its own to do, so that an idle phase is idle: the vacuum and analyze
 * autovacuum would run after a warm-up's thousands of sign-ups or after an import (a p99 of 36 ms in the idle phase
 * after the warm-up, 4.7 ms at the median, without), then a checkpoint.
 */
export async function settlePg(c: SQL): Promise<void> {
  await c.unsafe("VACUUM (ANALYZE)");
  await c.unsafe("CHECKPOINT");
}

/** A request log line of a failed request (DESIGN §8: every request's line carries its status); an error's line. */
const FAILED = /"status":[45]\d\d/;
const ERROR = /"level":"(?:error|warn)"/;

/** A load that had failures, as an error naming it, with the server's last error lines and failed requests' lines. */
export const failedLoad = (what: string, result: LoadResult, server: { failures: () => string[] }) =>
  new Error(`${what} had failures: ${JSON.stringify(result)}\n${server.failures().join("\n")}`);

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Sequential timing of `n` calls; returns p50/p99/mean in ms. */
export async function timeCalls(n: number, call: (i: number) => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

export const fmt = (n: number, digits = 3) => n.toFixed(digits);

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** A load at `url`; `warmUrl`, where its warm-up goes instead (warmUp). */
export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  connections?: number;
  duration?: number;
  emailBody?: boolean;
  body?: string;
  warmUrl?: string;
}

/** Runs bench/load.cjs (autocannon under Node) and returns its figures. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const proc = Bun.spawn(["node", join(ROOT, "bench", "load.cjs"), JSON.stringify(opts)], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`load generator failed: ${out}`);
  return JSON.parse(out.trim().split("\n").pop()!);
}

/** Resident memory of a process, in MB (Linux /proc). */
export async function rssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
}

/** CPU seconds a process has used so far: its main thread's, and all its threads' (Linux /proc). */
export function cpuTimes(pid: number): { main: number; all: number } {
  const ticks = (stat: string) => {
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  return { main: ticks(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8")), all: ticks(readFileSync(`/proc/${pid}/stat`, "utf8")) };
}

/** A Markdown table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export async function ceilingServer() {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "ceiling-server.ts")], { stdout: "pipe" });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const { value } = await reader.read();
  const { port } = JSON.parse(new TextDecoder().decode(value));
  return { url: `http://127.0.0.1:${port}/`, stop: () => proc.kill() };
}

/** Requests served unmeasured before a load is measured (`warmUp`), and the most seconds that may take. */
const WARM_REQUESTS = 50_000;
const WARM_MAX_SECONDS = 10;

/**
 * Unmeasured load first, until WARM_REQUESTS have been served (in 1 s steps, at most WARM_MAX_SECONDS), so that the
 * measured load meets the server's code as it runs for good. JavaScriptCore optimizes a function after a count of
 * its calls, not after a time: one second was 50,000 requests of the bare route but 6,000-8,000 sign-ups, whose code
 * (handler, validation, statements) was still being compiled through the next seconds (bench/README.md). A load
 * with a `warmUrl` warms up there (signUpLoad: the bench's second waitlist, so the measured one keeps its size).
 */
export async function warmUp(opts: LoadOptions): Promise<void> {
  const warm = { ...opts, url: opts.warmUrl ?? opts.url };
  let served = 0;
  for (let s = 0; s < WARM_MAX_SECONDS && served < WARM_REQUESTS; s++) {
    const r = await load({ ...warm, duration: 1 });
    if (r.non2xx || r.errors) throw new Error(`the warm-up of ${warm.url} had failures: ${JSON.stringify(r)}`);
    served += r.total;
  }
}

/** A load measured after its warm-up. */
export async function warmLoad(opts: LoadOptions) {
  await warmUp(opts);
  return load(opts);
}

/**
 * A load measured like `warmLoad`, with the server's memory sampled every 100 ms after the warm-up (the highest
 * sample) and the CPU seconds it used meanwhile (cpuTimes: main thread, all threads).
 */
export async function sampledLoad(pid: number, opts: LoadOptions): Promise<{ result: LoadResult; rss: number; cpu: { main: number; all: number } }> {
  await warmUp(opts);
  let rss = 0;
  const sampler = setInterval(() => void rssMb(pid).then((mb) => (rss = Math.max(rss, mb)), () => {}), 100);
  const before = cpuTimes(pid);
  try {
    const result = await load(opts);
    const after = cpuTimes(pid);
    return { result, rss, cpu: { main: after.main - before.main, all: after.all - before.all } };
  } finally {
    clearInterval(sampler);
  }
}

/** The bench waitlist's sign-up load (a new email each request). */
export const signUpLoad = (url: string, duration: number): LoadOptions => ({
  url: `${url}/api/v1/waitlist/${WAITLIST_KEY}/sign-up`,
  // its warm-up signs up on the second waitlist
  warmUrl: `${url}/api/v1/waitlist/${WARM_WAITLIST_KEY}/sign-up`,
  method: "POST",
  headers: { "x-api-key": BENCH_KEY, "content-type": "application/json" },
  emailBody: true,
  duration,
});

/** The bare route measured like every other load (warm-up, then `duration` seconds at 64 connections). */
export async function ceiling(duration: number): Promise<LoadResult> {
  const c = await ceilingServer();
  try {
    return await warmLoad({ url: c.url, duration });
  } finally {
    c.stop();
  }
}

/**
 * A standalone bench (`bun bench/X.ts [N]`): the ceiling first, then the server on a fresh file seeded with N
 * subscribers (the binary with BENCH_BIN; under `--cpu-prof` with BENCH_PROFILE=1, profiles in bench/profiles/),
 * given to `run`; the server stopped and the folder removed afterwards, on failure too.
 */
export async function standalone(name: string, run: (ctx: { n: number; duration: number; base: LoadResult; server: Awaited<ReturnType<typeof startServer>> }) => Promise<void>) {
  const n = Number(process.argv[2] ?? 10_000);
  const duration = Number(process.env.BENCH_DURATION ?? 5);
  const base = await ceiling(duration);
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  try {
    const dbUrl = `file:${join(dir, "bench.db")}`;
    await seed(dbUrl, n);
    const profile = process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${join(import.meta.dir, "profiles")}`] : [];
    const server = await startServer(dbUrl, {}, process.env.BENCH_BIN, profile);
    try {
      await run({ n, duration, base, server });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ceiling's row of a table. */
export const ceilingRow = (base: LoadResult) => ["ceiling: bare Bun.serve {} @64 conns", `${fmt(base.rps, 0)} req/s`, fmt(base.p50, 1), fmt(base.p99, 1), "1.00"];

// ---- sign-ups at a steady pace

export interface Paced {
  /** Per waitlist key: each answered sign-up's send time (performance.now()) and latency, ms. */
  latencies: Map<string, { at: number; ms: number }[]>;
  failed: number;
}

/**
 * Sign-ups at `pace` a second, each sent on its schedule whatever the earlier ones are doing (so a slow answer does not
 * slow the pace), in turn to each waitlist of `keys`, until `stop()` says so or `count` were sent. Latency from send
 * to the whole answer read.
 */
export async function pacedSignUps(
  url: string,
  apiKey: string,
  keys: string[],
  pace: number,
  until: { count?: number; stop?: () => boolean; onSample?: (key: string, ms: number) => void },
  tag: string,
): Promise<Paced> {
  const latencies = new Map(keys.map((k) => [k, [] as { at: number; ms: number }[]]));
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  for (let k = 0; ; k++) {
    if (until.count !== undefined && k >= until.count) break;
    if (until.stop?.()) break;
    const due = t0 + (k * 1000) / pace;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const key = keys[k % keys.length]!;
    const sent = performance.now();
    const p = fetch(`${url}/api/v1/waitlist/${key}/sign-up`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({ email: `live-${tag}-${k}@bench.example` }),
    }).then(
      async (res) => {
        await res.arrayBuffer();
        const ms = performance.now() - sent;
        if (!res.ok) return void failed++;
        latencies.get(key)!.push({ at: sent, ms });
        until.onSample?.(key, ms);
      },
      () => void failed++,
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  return { latencies, failed };
}
