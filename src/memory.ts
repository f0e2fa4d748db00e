// A resident-memory budget for the server. JavaScriptCore sizes its heap by the machine's RAM and,
// under sustained load, lets garbage pile up before collecting it; on a small VPS that is memory the
// database's page cache could use. Past the budget, a full collection runs (synchronously: the only kind
// that is full and hands the freed pages back; Bun.gc(false) only asks for one, and the heap went on
// growing), but only once the resident memory has grown by GROWTH since the last one left it, and at most
// once every three seconds. Each stops the server for 15-60 ms under load. Run whenever the memory stood
// over the budget (every 3 s), they gave back 0-11 MB each and paused the server every 3 s for good: the
// memory a collection cannot give back (the binary's code, the allocator's pages, SQLite's caches) kept it
// over the budget, under load and idle alike (issue 19, bench/README.md).
// Bun.shrink() is not used here (only once at start, serve.ts): it also throws away every function's compiled
// code, which then compiles again; once a second under load that cost up to half the throughput of the reads
// (docs/decisions.md).
const CHECK_MS = 1_000;
const MIN_GAP_MS = 3_000;
const GROWTH = 8 * 1024 * 1024;

export interface Runtime {
  collect(): void;
  rss(): number;
  /** Background work under way (an import): no collection then (issue 47). */
  busy?(): boolean;
}

/**
 * The budget's decision, made at time `at` (ms): a full collection when the resident memory is over `budgetBytes`, has
 * grown by GROWTH since the last collection left it, and the last was MIN_GAP_MS ago or more. True when it collected.
 */
export function memoryBudget(budgetBytes: number, runtime: Runtime): (at: number) => boolean {
  // what the last collection left: the resident memory no collection can give back, as far as it knows
  let floor = 0;
  let last = -Infinity;
  return (at) => {
    if (runtime.busy?.()) return false;
    const rss = runtime.rss();
    if (rss <= budgetBytes || rss < floor + GROWTH || at - last < MIN_GAP_MS) return false;
    runtime.collect();
    last = at;
    floor = runtime.rss();
    return true;
  };
}

/**
 * Checks the budget every CHECK_MS, except while `busy()` (background work: an import). A collection stopped the
 * server 50-100 ms there, a second or more apart, and those stops were most of the sign-ups' slowest 1% through an
 * import (issue 47); its memory is bounded by its own pacing, and the first check after it ends collects what it left.
 * (A check made at once when it ended fell between an upload's staging and its run, a stop of its own.)
 * `onCollect` hears of each collection, how long it stopped the server and what it gave back (serve.ts logs it at the
 * debug level: 22-59 ms at 146-184 MB under a 64-connection load, bench/README.md). Answers a function that stops it.
 */
export function keepMemoryNear(budgetBytes: number, busy?: () => boolean, onCollect?: (collection: Collection) => void): () => void {
  const collect = () => {
    const [before, started] = [process.memoryUsage.rss(), performance.now()];
    Bun.gc(true);
    onCollect?.({ rss_before_mb: mb(before), rss_after_mb: mb(process.memoryUsage.rss()), ms: Math.round((performance.now() - started) * 10) / 10 });
  };
  const check = memoryBudget(budgetBytes, { collect, rss: () => process.memoryUsage.rss(), busy });
  const timer = setInterval(() => check(performance.now()), CHECK_MS).unref();
  return () => clearInterval(timer);
}

/** A budget's full collection: the resident memory before and after it (MB), and how long it took (ms). */
export type Collection = { rss_before_mb: number; rss_after_mb: number; ms: number };

const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
