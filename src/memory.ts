// A resident-memory budget for the server. JavaScriptCore sizes its heap by the machine's RAM and,
// under sustained load, lets garbage pile up to ~80 MB before collecting it; on a small VPS that is
// memory the database's page cache could use. Once a second, past the budget, a full collection is started,
// and the pages freed by the one before go back to the system: without that, reads at ~60k req/s peaked at
// 151-157 MB (issue 19 asks for under 150). The collection runs concurrently (`Bun.gc(false)` returns in
// under a millisecond); a synchronous one stopped the server for 20-35 ms each second under a full sign-up
// load, which was most of its p99 (56-59 ms against 34-37, docs/decisions.md).
const CHECK_MS = 1_000;

export function keepMemoryNear(budgetBytes: number): void {
  setInterval(() => {
    if (process.memoryUsage.rss() <= budgetBytes) return;
    Bun.gc(false);
    // and hand the freed pages back to the system (JavaScriptCore keeps them for reuse otherwise)
    Bun.shrink();
  }, CHECK_MS).unref();
}
