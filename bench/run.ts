// `npm run bench` (DESIGN §7): every benchmark in one run, one table, each figure beside a ceiling measured
// in the same run on the same machine, on embedded libSQL and on PostgreSQL (issue 18 item 8). Knobs: BENCH_SIZES
// (default 10000,100000,1000000), BENCH_PG_SIZES (default 10000,100000; empty skips PostgreSQL), BENCH_DURATION
// (s, default 5), BENCH_SOAK_MINUTES (default 10; 0 skips the soak).
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { BENCH_KEY, seed, WAITLIST_KEY } from "./seed";
import { startPg } from "./pg";
import { ceiling, ceilingServer, failedLoad, fmt, load, rssMb, sampledLoad, signUpLoad, startServer, table, timeCalls, warmLoad, type LoadResult } from "./lib";
import { soak } from "./soak";
import { inTurns, measureReads, pairedReads, publishPage, readRoutes, type ReadResult } from "./reads";
import { compaction } from "./compaction";

const ROOT = join(import.meta.dir, "..");
const SIZES = (process.env.BENCH_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const PG_SIZES = (process.env.BENCH_PG_SIZES ?? "10000,100000").split(",").filter(Boolean).map(Number);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
/** The reads at the smallest and largest size in turns (pairedReads): rounds, and seconds a load. */
const PAIRED_ROUNDS = Number(process.env.BENCH_PAIRED_ROUNDS ?? 6);
const PAIRED_SECONDS = Math.min(DURATION, 2);
const rows: string[][] = [];
const row = (measure: string, value: string, p50 = "-", p99 = "-", ratio = "-") => rows.push([measure, value, p50, p99, ratio]);

/** Sequential autocommit inserts into a libSQL file in WAL mode (synchronous=FULL, as the service runs). */
async function rawInserts(seconds: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "bench-raw-"));
  const c = createClient({ url: `file:${join(dir, "raw.db")}` });
  await c.execute("PRAGMA journal_mode = WAL");
  await c.execute("PRAGMA synchronous = FULL");
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT UNIQUE, at INTEGER)");
  let n = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) await c.execute({ sql: "INSERT INTO t (email, at) VALUES (?, ?)", args: [`r${n++}@example.com`, Date.now()] });
  c.close();
  rmSync(dir, { recursive: true, force: true });
  return n / seconds;
}

async function coldStart(bin: string, dbUrl: string): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([bin, "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbUrl], { stdout: "pipe", env: { ...process.env, RATE_LIMITS: "off" } });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let buffer = "";
  let port = 0;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) throw new Error("binary exited");
    buffer += new TextDecoder().decode(value);
    port = Number(buffer.match(/"msg":"listening".*?"port":(\d+)/)?.[1] ?? 0);
  }
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
  }
  const ms = performance.now() - started;
  proc.kill();
  await proc.exited;
  return ms;
}

// ceilings: the bare route right before each part's loads, whose figures are shares of it. The machine's speed drifts
// by a third within minutes here: a ceiling measured once at the start made the 1M loads, minutes later, look slower or
// faster than the 10k ones for no reason of theirs.
/** The bare route measured now, as a row, for the loads that follow. */
async function ceilingBefore(what: string): Promise<LoadResult> {
  const c = await ceiling(DURATION);
  row(`ceiling: bare Bun.serve {} @64 conns, before ${what}`, `${fmt(c.rps, 0)} req/s`, fmt(c.p50, 1), fmt(c.p99, 1), "1.00");
  return c;
}
const raw = await rawInserts(3);
row("ceiling: raw libSQL insert loop (WAL, FULL)", `${fmt(raw, 0)} inserts/s`);

/** Sign-up and read throughput @64 conns on one engine's server; failures are counted, not thrown (PostgreSQL). */
async function throughput(url: string, n: number) {
  const headers = { "x-api-key": BENCH_KEY, "content-type": "application/json" };
  const signup = await warmLoad(signUpLoad(url, DURATION));
  // a subscriber in the middle of the line: its position is counted, not looked up
  const read = await warmLoad({ url: `${url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${Math.ceil(n / 2)}`, headers, duration: DURATION });
  return { signup, read, failed: signup.non2xx + signup.errors + read.non2xx + read.errors };
}
const failures = (r: { non2xx: number; errors: number }) => (r.non2xx + r.errors ? ` (${r.non2xx + r.errors} failed)` : "");
let loadFailed = false;

// each as a share of its part's ceiling
const signupShare: Record<number, number> = {};
const readShare: Record<number, number> = {};
const getP50: Record<number, number> = {};
const listP50: Record<number, number> = {};
const reads: Record<number, ReadResult[]> = {};
// every size seeded first: the reads at the smallest and largest are also measured in turns, both servers up
const files: Record<number, { dir: string; dbUrl: string }> = {};
process.on("exit", () => Object.values(files).forEach(({ dir }) => rmSync(dir, { recursive: true, force: true })));
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), "bench-"));
  files[n] = { dir, dbUrl: `file:${join(dir, "bench.db")}` };
  await seed(files[n].dbUrl, n);
}
const [small, large] = [SIZES[0], SIZES[SIZES.length - 1]];
/** A copy of a seeded file whose servers have stopped (and folded the WAL into it), in a folder of its own. */
function copyOf(dbUrl: string): { dir: string; dbUrl: string } {
  const from = dbUrl.slice("file:".length);
  const dir = mkdtempSync(join(tmpdir(), "bench-copy-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const to = join(dir, "bench.db");
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
  return { dir, dbUrl: `file:${to}` };
}
const paired: Awaited<ReturnType<typeof pairedReads>> = [];
if (small !== large) {
  const [a, b] = [await startServer(files[small].dbUrl), await startServer(files[large].dbUrl)];
  try {
    for (const server of [a, b]) await publishPage(server.url);
    paired.push(...(await pairedReads({ url: a.url, n: small }, { url: b.url, n: large }, PAIRED_ROUNDS, PAIRED_SECONDS)));
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  // the sign-up in turns too, on copies of the two files (a sign-up load grows its list; the parts below measure the
  // sizes as seeded), with 1 s loads: the smaller list grows by ~10k a load, so ~60k by the last pair
  const copies = [copyOf(files[small].dbUrl), copyOf(files[large].dbUrl)];
  const [c, d] = [await startServer(copies[0].dbUrl), await startServer(copies[1].dbUrl)];
  try {
    paired.push({ name: "sign-up (copies of the files, 1 s loads)", ...(await inTurns(signUpLoad(c.url, 1), signUpLoad(d.url, 1), PAIRED_ROUNDS)) });
  } finally {
    await Promise.all([c.stop(), d.stop()]);
    for (const { dir } of copies) rmSync(dir, { recursive: true, force: true });
  }
}
for (const n of SIZES) {
  const { dir, dbUrl } = files[n];
  const label = n.toLocaleString("en");
  const base = await ceilingBefore(`the ${label} loads`);
  const server = await startServer(dbUrl);
  const headers = { "x-api-key": BENCH_KEY, "content-type": "application/json" };
  // issue 19: the launch-day reads, each against the ceiling
  await publishPage(server.url);
  reads[n] = await measureReads(server.url, n, DURATION);
  for (const r of reads[n]) row(`${r.name} @64 conns, ${label}`, `${fmt(r.result.rps, 0)} req/s`, fmt(r.result.p50, 1), fmt(r.result.p99, 1), fmt(r.result.rps / base.rps, 3));
  for (let i = 0; i < 200; i++) await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${1 + ((i * 7919) % n)}`, { headers }).then((r) => r.text());
  const get = await timeCalls(1000, (i) => fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${1 + ((i * 104_729) % n)}`, { headers }).then((r) => r.text()));
  const list = await timeCalls(300, (i) =>
    fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers?sort_by=position&sort_dir=asc&limit=100&page=${1 + ((i * 7919) % Math.floor(n / 100))}`, { headers }).then((r) => r.text()),
  );
  getP50[n] = get.p50;
  listP50[n] = list.p50;
  const signup = await warmLoad(signUpLoad(server.url, DURATION));
  if (signup.non2xx || signup.errors) throw failedLoad("sign-up load", signup, server);
  signupShare[n] = signup.rps / base.rps;
  row(`sign-up @64 conns, ${label} subscribers`, `${fmt(signup.rps, 0)} req/s`, fmt(signup.p50, 1), fmt(signup.p99, 1), fmt(signup.rps / base.rps, 3));
  const read = await warmLoad({ url: `${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${Math.ceil(n / 2)}`, headers, duration: DURATION });
  if (read.non2xx || read.errors) throw failedLoad("read load", read, server);
  readShare[n] = read.rps / base.rps;
  row(`GET subscriber @64 conns, ${label}`, `${fmt(read.rps, 0)} req/s`, fmt(read.p50, 1), fmt(read.p99, 1), fmt(read.rps / base.rps, 3));
  row(`GET subscriber (sequential), ${label}`, "-", fmt(get.p50, 2), fmt(get.p99, 2));
  row(`list by position 100/page (sequential), ${label}`, "-", fmt(list.p50, 2), fmt(list.p99, 2));
  if (n === SIZES[0]) {
    await server.stop();
    const normal = await startServer(dbUrl, { DATABASE_SYNC: "normal" });
    const fast = await warmLoad(signUpLoad(normal.url, DURATION));
    row(`sign-up @64 conns, ${label}, DATABASE_SYNC=normal`, `${fmt(fast.rps, 0)} req/s`, fmt(fast.p50, 1), fmt(fast.p99, 1), fmt(fast.rps / base.rps, 3));
    Object.assign(server, normal);
    const views = await load({ url: `${server.url}/api/v1/waitlist/${WAITLIST_KEY}/log-view`, method: "POST", headers, body: "{}", duration: DURATION });
    row(`log-view @64 conns`, `${fmt(views.rps, 0)} req/s`, fmt(views.p50, 1), fmt(views.p99, 1), fmt(views.rps / base.rps, 3));
  }
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (small !== large) {
  row(`sign-up throughput ${large.toLocaleString("en")} / ${small.toLocaleString("en")} (shares of their ceilings)`, "-", "-", "-", fmt(signupShare[large] / signupShare[small], 2));
  row(`GET subscriber p50 ${large.toLocaleString("en")} / ${small.toLocaleString("en")}`, "-", "-", "-", fmt(getP50[large] / getP50[small], 2));
  row(`list page p50 ${large.toLocaleString("en")} / ${small.toLocaleString("en")}`, "-", "-", "-", fmt(listP50[large] / listP50[small], 2));
  // issue 19: flat in the list's size (each read's throughput at the small size over the large one, and the sign-up's, 1.2 at most),
  // measured in turns on both (pairedReads, inTurns)
  for (const r of paired) {
    row(`${r.name}: throughput ${small.toLocaleString("en")} / ${large.toLocaleString("en")} (median of paired rounds)`, r.ratios.map((x) => fmt(x, 2)).join(", "), "-", "-", fmt(r.ratio, 2));
  }
}
{
  // issue 19: a list page 5,000 pages deep against page 1, at the largest size (1.5 at most)
  const at = reads[large] ?? [];
  const first = at.find((r) => r.path.endsWith("limit=20"));
  const deep = at.find((r) => r.path.endsWith("page=5000"));
  if (first && deep) row(`list page 5,000 deep: throughput page 1 / page 5,000, ${large.toLocaleString("en")}`, "-", "-", "-", fmt(first.result.rps / deep.result.rps, 2));
}

// issue 18: the same loads on PostgreSQL (its own server from npm, fsync on, DATABASE_POOL_SIZE default 10),
// beside embedded libSQL: each as a share of this run's ceiling, and as a ratio to the embedded figure
if (PG_SIZES.length) {
  const pg = await startPg();
  try {
    const rawPg = await pg.rawInserts(3);
    row("ceiling: raw PostgreSQL insert loop (one connection, fsync on)", `${fmt(rawPg, 0)} inserts/s`);
    for (const n of PG_SIZES) {
      const label = n.toLocaleString("en");
      const dbUrl = await pg.database(`bench_${n}`);
      await seed(dbUrl, n);
      const base = await ceilingBefore(`the PostgreSQL ${label} loads`);
      const server = await startServer(dbUrl);
      try {
        const headers = { "x-api-key": BENCH_KEY };
        for (let i = 0; i < 200; i++) await fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${1 + ((i * 7919) % n)}`, { headers }).then((r) => r.text());
        const get = await timeCalls(1000, (i) => fetch(`${server.url}/api/v1/waitlist/${WAITLIST_KEY}/subscribers/sub${1 + ((i * 104_729) % n)}`, { headers }).then((r) => r.text()));
        await publishPage(server.url);
        for (const r of await measureReads(server.url, n, DURATION, true)) {
          if (r.result.non2xx || r.result.errors) loadFailed = true;
          row(`PostgreSQL ${r.name} @64 conns, ${label}`, `${fmt(r.result.rps, 0)} req/s${failures(r.result)}`, fmt(r.result.p50, 1), fmt(r.result.p99, 1), fmt(r.result.rps / base.rps, 3));
        }
        const { signup, read, failed } = await throughput(server.url, n);
        if (failed) loadFailed = true;
        row(`PostgreSQL sign-up @64 conns, ${label} subscribers`, `${fmt(signup.rps, 0)} req/s${failures(signup)}`, fmt(signup.p50, 1), fmt(signup.p99, 1), fmt(signup.rps / base.rps, 3));
        row(`PostgreSQL GET subscriber @64 conns, ${label}`, `${fmt(read.rps, 0)} req/s${failures(read)}`, fmt(read.p50, 1), fmt(read.p99, 1), fmt(read.rps / base.rps, 3));
        row(`PostgreSQL GET subscriber (sequential), ${label}`, "-", fmt(get.p50, 2), fmt(get.p99, 2));
        if (signupShare[n]) row(`sign-up throughput PostgreSQL / embedded, ${label} (shares of their ceilings)`, "-", "-", "-", fmt(signup.rps / base.rps / signupShare[n], 2));
        if (readShare[n]) row(`GET subscriber throughput PostgreSQL / embedded, ${label} (shares of their ceilings)`, "-", "-", "-", fmt(read.rps / base.rps / readShare[n], 2));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await pg.stop();
  }
}

// issue 17: pruning frees pages, the nightly compaction hands them back to the disk
{
  const c = await compaction();
  const mb = (n: number) => `${fmt(n / 1024 / 1024, 1)} MB`;
  row(`database file: grown (${c.rows.toLocaleString("en")} old outbox rows) / pruned / compacted`, `${mb(c.grownBytes)} / ${mb(c.prunedBytes)} / ${mb(c.compactedBytes)}`, "-", "-", `compact ${fmt(c.compactMs, 0)} ms`);
}

// the compiled binary: cold start to first answer, memory idle and under load
const bin = join(ROOT, "dist", "waitlist");
{
  // always the binary of this checkout
  const build = Bun.spawn([process.execPath, join(ROOT, "scripts", "build.ts")], { cwd: ROOT, stdout: "ignore" });
  if ((await build.exited) !== 0 || !existsSync(bin)) throw new Error("build failed");
}
{
  const dir = mkdtempSync(join(tmpdir(), "bench-bin-"));
  const dbUrl = `file:${join(dir, "bin.db")}`;
  await coldStart(bin, dbUrl); // first run creates and migrates the database
  const starts: number[] = [];
  for (let i = 0; i < 5; i++) starts.push(await coldStart(bin, dbUrl));
  starts.sort((x, y) => x - y);
  const bunStart = performance.now();
  const c = await ceilingServer();
  await fetch(c.url);
  const bareMs = performance.now() - bunStart;
  c.stop();
  row("binary cold start to first /healthz answer (median of 5)", `${fmt(starts[2], 0)} ms`, "-", "-", `bare bun ${fmt(bareMs, 0)} ms`);
  await seed(dbUrl.replace("bin.db", "bin-load.db"), 10_000);
  const base = await ceilingBefore("the binary's loads");
  const server = await startServer(dbUrl.replace("bin.db", "bin-load.db"), {}, bin);
  const idle = await rssMb(server.pid);
  const { result: binLoad, rss: signUpRss } = await sampledLoad(server.pid, signUpLoad(server.url, DURATION));
  // issue 19: and under the reads (every route of the table in turn)
  await publishPage(server.url);
  let readRss = 0;
  for (const route of readRoutes(10_000).filter((r) => !r.deep)) {
    readRss = Math.max(readRss, (await sampledLoad(server.pid, { url: `${server.url}${route.path}`, headers: { "x-api-key": BENCH_KEY }, duration: DURATION })).rss);
  }
  row("binary RSS idle / under sign-up load / under read loads (highest)", `${fmt(idle, 0)} MB / ${fmt(signUpRss, 0)} MB / ${fmt(readRss, 0)} MB`, "-", "-", "-");
  row("binary sign-up @64 conns, 10,000 subscribers", `${fmt(binLoad.rps, 0)} req/s`, fmt(binLoad.p50, 1), fmt(binLoad.p99, 1), fmt(binLoad.rps / base.rps, 3));
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

// the soak (issue 10): steady mixed traffic against the binary, a webhook receiver failing 20% of the time
const SOAK_MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
let soakFailed = false;
if (SOAK_MINUTES > 0) {
  const r = await soak(SOAK_MINUTES, bin);
  const label = `soak (binary): ${SOAK_MINUTES} min at 200 req/s, 40% sign-ups, 30% reads, 20% views, 10% form posts`;
  row(label, `${r.requests} requests, ${r.failed} failed`);
  row("soak: RSS after warm-up / in the last fifth", `${fmt(r.rssEarlyMb, 0)} MB / ${fmt(r.rssLateMb, 0)} MB`);
  row("soak: webhooks delivered (receiver failing 20%)", `${r.webhooksDelivered} of ${r.webhooksCreated}, ${r.receiverFailures} failures retried`);
  soakFailed = !r.ok;
}

console.log(table(["measure", "value", "p50 ms", "p99 ms", "x ceiling"], rows));
if (loadFailed) console.error("a PostgreSQL load had failed requests (see the rows marked failed)");
if (soakFailed) console.error("the soak failed: a request failed, memory grew or a webhook was never delivered");
if (loadFailed || soakFailed) process.exit(1);
