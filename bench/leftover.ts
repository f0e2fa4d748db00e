// `bun bench/leftover.ts [--rows N] [--rounds R]` (issue 47, PostgreSQL): what an import leaves in the database that
// slows later sign-ups. Two databases on one PostgreSQL: one seeded to N subscribers (bench/seed.ts), one given N rows
// by an import with nothing else going on (Viral Loops' columns, as bench/import.ts). Each is settled (VACUUM ANALYZE,
// CHECKPOINT), then idle sign-ups are measured on each in turns (the order swapped every round, so the machine's drift
// favours neither), with the WAL each sign-up wrote (records, full-page images, bytes), the buffers the backends read
// from the OS, and the statements that took longest. BENCH_LEFTOVER_SQL runs statements on the imported database
// afterwards (e.g. "REINDEX TABLE subscribers") and measures both once more. BENCH_BIN, BENCH_PACE, BENCH_IDLE,
// BENCH_PG_FLAGS as in bench/import.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { benchAccount, fmt, latencyStats, pacedSignUps, seededRandom, settlePg, startServer, table, warmUpSignUps } from "./lib";
import { startPg } from "./pg";
import { BENCH_KEY, seed, WAITLIST_KEY, WARM_WAITLIST_KEY } from "./seed";

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const ROWS = opt("--rows", 200_000);
const ROUNDS = opt("--rounds", 3);
const PACE = Number(process.env.BENCH_PACE ?? 100);
const IDLE = Number(process.env.BENCH_IDLE ?? 2_000);
const BIN = process.env.BENCH_BIN;
const log = (text: string) => console.error(`[leftover] ${text}`);

async function writeCsv(path: string) {
  const rand = seededRandom(47);
  const out = Bun.file(path).writer();
  out.write("email,firstname,lastname,id,referrerId,createdAt,tags\n");
  const start = Date.parse("2024-01-01T00:00:00Z");
  for (let i = 0; i < ROWS; i++) {
    const ref = i > 0 && rand() < 0.3 ? `vl-${rand() < 0.5 ? Math.max(0, i - 1 - Math.floor(rand() * 20)) : Math.floor(rand() * i)}` : "";
    const tags = rand() < 0.5 ? "" : ["beta", "vip", "press", "partner"][Math.floor(rand() * 4)];
    out.write(`imp${i}@example.com,First${i},Last${i},vl-${i},${ref},${new Date(start + i * 1000).toISOString()},${tags}\n`);
  }
  await out.end();
}

const dir = mkdtempSync(join(tmpdir(), "bench-leftover-"));
const pg = await startPg();
const stopping: (() => Promise<unknown>)[] = [];
try {
  const csv = join(dir, "import.csv");
  await writeCsv(csv);
  Bun.spawnSync(["sync"]);

  // the seeded list
  const seededUrl = await pg.database("seeded");
  let t = performance.now();
  await seed(seededUrl, ROWS);
  log(`seeded ${ROWS.toLocaleString("en")} in ${fmt((performance.now() - t) / 1000, 1)} s`);
  const seeded = await startServer(seededUrl, {}, BIN);
  stopping.push(seeded.stop);

  // the imported list: an account, the importing waitlist and another, an import with nothing else going on
  const importedUrl = await pg.database("imported");
  const imported = await startServer(importedUrl, {}, BIN);
  stopping.push(imported.stop);
  const { apiKey, api } = benchAccount(imported.url, importedUrl, "leftover", BIN);
  const rewards = { enabled: true, signup_points: 10, referral_points: 5 };
  const target = (await api("POST", "/waitlists", { name: "Imported", referral_rewards: rewards })).waitlist.key as string;
  const other = (await api("POST", "/waitlists", { name: "Other", referral_rewards: rewards })).waitlist.key as string;
  t = performance.now();
  const res = await fetch(`${imported.url}/api/v1/waitlist/${target}/subscribers/import?mode=skip`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "text/csv" }, body: Bun.file(csv) });
  if (res.status !== 202) throw new Error(`import: ${res.status} ${await res.text()}`);
  const id = ((await res.json()) as any).data.import.id as string;
  const imp = new SQL(importedUrl, { max: 1 });
  stopping.push(() => imp.close());
  for (;;) {
    const view = (await api("GET", `/waitlist/${target}/imports/${id}`)).import;
    if (view.status === "failed") throw new Error(`import failed: ${view.failure}`);
    if (view.status === "done" && (await imp.unsafe("SELECT 1 FROM import_rows LIMIT 1")).length === 0) break;
    await Bun.sleep(1000);
  }
  log(`imported ${ROWS.toLocaleString("en")} in ${fmt((performance.now() - t) / 1000, 1)} s`);

  const lists = [
    { name: "seeded", url: seededUrl, server: seeded, key: BENCH_KEY, keys: [WAITLIST_KEY, WARM_WAITLIST_KEY], warm: WARM_WAITLIST_KEY },
    { name: "imported", url: importedUrl, server: imported, key: apiKey, keys: [target, other], warm: other },
  ];
  const admin = new SQL(await pg.database("probe"), { max: 1 });
  stopping.push(() => admin.close());
  // the statements that took longest in each phase, when the server loads pg_stat_statements (BENCH_PG_FLAGS)
  const statements = String((await admin.unsafe("SHOW shared_preload_libraries"))[0].shared_preload_libraries).includes("pg_stat_statements");
  if (statements) await admin.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  for (const l of lists) await warmUpSignUps(l.server.url, l.key, l.warm);
  const wal = async () => (await admin.unsafe("SELECT wal_records::bigint AS r, wal_fpi::bigint AS f, wal_bytes::bigint AS b FROM pg_stat_wal"))[0];
  const reads = async () => Number((await admin.unsafe("SELECT coalesce(sum(reads), 0)::bigint AS n FROM pg_stat_io WHERE backend_type = 'client backend'"))[0].n);
  const sizes = async (url: string) => {
    const c = new SQL(url, { max: 1 });
    try {
      return (await c.unsafe(`SELECT c.relname, pg_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') AND pg_relation_size(c.oid) > 1000000 ORDER BY 2 DESC`)) as { relname: string; bytes: string }[];
    } finally {
      await c.close();
    }
  };
  for (const l of lists) log(`${l.name}: ${(await sizes(l.url)).map((r) => `${r.relname} ${fmt(Number(r.bytes) / 1e6, 1)} MB`).join(", ")}`);

  const rows: string[][] = [];
  const measure = async (l: (typeof lists)[number], label: string) => {
    const c = new SQL(l.url, { max: 1 });
    await settlePg(c);
    await c.close();
    if (statements) await admin.unsafe("SELECT pg_stat_statements_reset()");
    const [w0, r0] = [await wal(), await reads()];
    const paced = await pacedSignUps(l.server.url, l.key, l.keys, PACE, { count: IDLE }, `${label.replace(/\W/g, "")}-${Math.random().toString(36).slice(2, 8)}`);
    const [w1, r1] = [await wal(), await reads()];
    if (paced.failed) throw new Error(`${paced.failed} sign-ups failed on ${l.name}: ${l.server.failures().join("\n")}`);
    const n = IDLE;
    const per = (k: "r" | "f" | "b") => (Number(w1[k]) - Number(w0[k])) / n;
    const p99s = l.keys.map((k) => {
      const s = latencyStats(paced.latencies.get(k)!);
      return `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}`;
    });
    rows.push([label, l.name, ...p99s, fmt(per("r"), 1), fmt(per("f"), 2), fmt(per("b") / 1024, 1), fmt((r1 - r0) / n, 2)]);
    log(rows.at(-1)!.join(" | "));
    if (!statements) return;
    const top = await admin.unsafe(`SELECT calls, round(mean_exec_time::numeric, 3) AS mean, round(max_exec_time::numeric, 1) AS max, shared_blks_read AS rd, wal_fpi AS fpi,
        left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '${l.name}'
        ORDER BY total_exec_time DESC LIMIT 6`);
    for (const r of top) log(`  ${r.calls} x ${r.mean} ms (max ${r.max}), ${r.rd} blocks read, ${r.fpi} fpi: ${r.q}`);
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const l of round % 2 ? lists : [...lists].reverse()) await measure(l, `round ${round}`);
  }
  if (process.env.BENCH_LEFTOVER_SQL) {
    const c = new SQL(importedUrl, { max: 1 });
    t = performance.now();
    await c.unsafe(process.env.BENCH_LEFTOVER_SQL).simple();
    await c.close();
    log(`${process.env.BENCH_LEFTOVER_SQL} in ${fmt((performance.now() - t) / 1000, 1)} s; ${(await sizes(importedUrl)).map((r) => `${r.relname} ${fmt(Number(r.bytes) / 1e6, 1)} MB`).join(", ")}`);
    for (let round = 1; round <= 2; round++) {
      for (const l of round % 2 ? [lists[1]!, lists[0]!] : lists) await measure(l, `after SQL ${round}`);
    }
  }
  console.log(table(["phase", "list", "p50 / p99 ms, its waitlist", "p50 / p99 ms, the other", "WAL records / sign-up", "full-page images / sign-up", "WAL KB / sign-up", "blocks read / sign-up"], rows));
} finally {
  for (const stop of stopping.reverse()) await stop().catch(() => {});
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
