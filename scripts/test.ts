// `npm test`: every test file on embedded libSQL, then the end-to-end suites again on PostgreSQL (issue 18 item 6).
// Usage: bun scripts/test.ts [--engine sqlite|pg] [--pg-bin DIR] [files...]; files given run on SQLite, and on
// PostgreSQL where the PostgreSQL pass takes them. The PostgreSQL server comes from npm (test/support/pg.ts), or
// TEST_PG_URL, or `--pg-bin`: a server started for the run from that folder's binaries (an operator's version, e.g.
// Debian's /usr/lib/postgresql/15/bin; .ci/run).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PG_DID_NOT_START, startEmbeddedPg, type EmbeddedPg } from "./embedded-pg";

const ROOT = join(import.meta.dir, "..");
const TIMEOUT_MS = "30000";

/**
 * Never on the PostgreSQL pass, each with a one-line reason: what they test is the embedded file itself, or they
 * start PostgreSQL themselves in every pass. (Unit, model and browser tests do not depend on the engine and are
 * not *.e2e files.)
 */
const NOT_ON_PG: Record<string, string> = {
  "test/backup.e2e.test.ts": "VACUUM INTO snapshots of the embedded file (PostgreSQL: pg_dump)",
  "test/restore.e2e.test.ts": "swaps embedded files and reads the file without its WAL",
  "test/crash.e2e.test.ts": "SIGKILL of a server writing the embedded file, read back through libSQL",
  "test/scale-out.e2e.test.ts": "two instances on one embedded file (test/pg-scale-out.e2e.test.ts is PostgreSQL's)",
  "test/store.e2e.test.ts": "runs both engines in the SQLite pass already",
  "test/pg-schema.e2e.test.ts": "runs both engines in the SQLite pass already",
  "test/copy.e2e.test.ts": "runs both engines in the SQLite pass already",
  "test/pg-outage.e2e.test.ts": "has a PostgreSQL server of its own, in the SQLite pass already",
  "test/pg-driver.e2e.test.ts": "the driver alone on the run's PostgreSQL server, in the SQLite pass already",
  "test/sqlite-connections.e2e.test.ts": "the settings of the embedded file's connections",
  "test/conformance.e2e.test.ts": "runs both engines side by side in the SQLite pass already, comparing their answers",
  "test/writes.e2e.test.ts": "the embedded engine's model of what a write changes (PostgreSQL's caches check its stamp alone)",
};

/**
 * The PostgreSQL pass. Until every service is ported (issue 18), only the files listed in PG_PORTED; once they
 * all are, set PG_ALL_E2E and it runs every *.e2e.test.ts not in NOT_ON_PG (a file to leave out: one line there).
 */
const PG_ALL_E2E = true;
const PG_PORTED: string[] = [];

const allTests = () =>
  readdirSync(join(ROOT, "test"))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f}`)
    .sort();

function pgPass(): string[] {
  const files = PG_ALL_E2E ? allTests().filter((f) => f.endsWith(".e2e.test.ts")) : PG_PORTED;
  const both = PG_PORTED.filter((f) => f in NOT_ON_PG);
  if (both.length) throw new Error(`listed for PostgreSQL and excluded from it: ${both.join(", ")}`);
  const missing = [...PG_PORTED, ...Object.keys(NOT_ON_PG)].filter((f) => !allTests().includes(f));
  if (missing.length) throw new Error(`scripts/test.ts names files that do not exist: ${missing.join(", ")}`);
  return files.filter((f) => !(f in NOT_ON_PG));
}

/** Lines kept before a `(fail)` line: its error and what the test printed just before. */
const CONTEXT_LINES = 18;
/** Failures shown whole in the closing summary; the rest by their `(fail)` line. */
const FAILURES_SHOWN = 3;
/** Each failing test of the passes, as its context and `(fail)` line, for the summary after the last pass. */
const failures: { engine: string; lines: string[] }[] = [];

/** Passes the child's output through as it comes, keeping each failure: CI shows only the output's tail. */
async function relay(engine: string, stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) {
  const decoder = new TextDecoder();
  let since: string[] = [];
  let rest = "";
  for await (const chunk of stream) {
    out.write(chunk);
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const raw of lines) {
      const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
      if (line.startsWith("(fail)")) failures.push({ engine, lines: [...since, line] });
      if (/^\((pass|fail|skip|todo)\)|^test\/.*:$/.test(line)) since = [];
      else if (since.push(line) > CONTEXT_LINES) since.shift();
    }
  }
}

function summary() {
  if (!failures.length) return;
  console.log(`\n== ${failures.length} failed test(s):`);
  failures.forEach(({ engine, lines }, i) => {
    if (i < FAILURES_SHOWN) console.log(`\n-- on ${engine}:\n${lines.join("\n")}`);
    else console.log(`-- on ${engine}: ${lines[lines.length - 1]}`);
  });
}

async function pass(engine: "sqlite" | "pg", files: string[]): Promise<number> {
  const started = Date.now();
  console.log(`\n== ${engine === "pg" ? "PostgreSQL" : "embedded libSQL"}: ${files.length ? `${files.length} file(s)` : "every test file"}`);
  // an explicit list keeps bun from reading its arguments as name filters
  const args = files.map((f) => `./${f}`);
  const proc = Bun.spawn([process.execPath, "test", "--timeout", TIMEOUT_MS, ...args], {
    cwd: ROOT,
    env: { ...process.env, TEST_ENGINE: engine },
    stdio: ["inherit", "pipe", "pipe"],
  });
  const relayed = Promise.all([relay(engine, proc.stdout, process.stdout), relay(engine, proc.stderr, process.stderr)]);
  // Ctrl-C reaches the child through the terminal; a TERM sent to this script alone is passed on
  const forward = () => proc.kill("SIGTERM");
  process.once("SIGTERM", forward);
  const code = await proc.exited;
  await relayed;
  process.off("SIGTERM", forward);
  console.log(`== ${engine}: exit ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
  return code;
}

const argv = process.argv.slice(2);
const option = (name: string) => (argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? "") : null);
const only = option("--engine");
const pgBin = option("--pg-bin");
if ((only !== null && only !== "sqlite" && only !== "pg") || pgBin === "") {
  console.error("usage: bun scripts/test.ts [--engine sqlite|pg] [--pg-bin DIR] [test files...]");
  process.exit(2);
}
const chosen = argv.filter((a, i) => !a.startsWith("--") && !argv[i - 1]?.startsWith("--")).map((f) => f.replace(/^\.\//, ""));

/** The run's PostgreSQL from `--pg-bin`'s binaries, as TEST_PG_URL for the passes; stopped and removed at the end. */
let ownPg: { server: EmbeddedPg; dir: string } | null = null;
const stopOwnPg = async () => {
  if (!ownPg) return;
  await ownPg.server.pg.stop().catch(() => {});
  rmSync(ownPg.dir, { recursive: true, force: true });
  ownPg = null;
};
if (pgBin !== null) {
  const dir = mkdtempSync(join(tmpdir(), "waitlist-pg-bin-"));
  try {
    const bin = () => ({ dir: pgBin, initdb: join(pgBin, "initdb"), postgres: join(pgBin, "postgres") });
    ownPg = { server: await startEmbeddedPg(dir, { fsync: false, persistent: false, binaries: bin }), dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    console.error((err as Error).message);
    process.exit(1);
  }
  process.env.TEST_PG_URL = `${ownPg.server.base}/postgres`;
  const version = Bun.spawnSync([join(pgBin, "postgres"), "--version"]).stdout.toString().trim();
  console.log(`PostgreSQL for this run: ${version} (${pgBin})`);
  process.once("SIGINT", () => void stopOwnPg().then(() => process.exit(130)));
}

const pgFiles = pgPass();
const onPg = chosen.length ? chosen.filter((f) => (only === "pg" ? true : pgFiles.includes(f))) : pgFiles;
const skipped = Object.entries(NOT_ON_PG).filter(([f]) => !chosen.length || chosen.includes(f));

let failed = false;
if (only !== "pg") {
  const code = await pass("sqlite", chosen);
  if (code === PG_DID_NOT_START) {
    await stopOwnPg();
    process.exit(1);
  }
  failed = code !== 0;
}
if (only !== "sqlite") {
  if (onPg.length) failed = (await pass("pg", onPg)) !== 0 || failed;
  else console.log("\n== PostgreSQL: no file in this pass yet (scripts/test.ts PG_PORTED)");
  if (only === "pg" || onPg.length) for (const [f, why] of skipped) console.log(`   not on PostgreSQL: ${f}: ${why}`);
}
await stopOwnPg();
summary();
process.exit(failed ? 1 : 0);
