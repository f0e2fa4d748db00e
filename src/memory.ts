// A resident-memory budget for the server. JavaScriptCore sizes its heap by the machine's RAM and,
// under sustained load, lets garbage pile up to ~80 MB before collecting it; on a small VPS that is
// memory the database's page cache could use. Once a second, past the budget, a full collection runs
// (~10 ms at that heap size; ~4% of sign-up throughput at full load, nothing when idle), and the freed pages go
// back to the system: without that, reads at ~60k req/s peaked at 151-157 MB (issue 19 asks for under 150).
const CHECK_MS = 1_000;

export function keepMemoryNear(budgetBytes: number): void {
  setInterval(() => {
    if (process.memoryUsage.rss() <= budgetBytes) return;
    Bun.gc(true);
    // and hand the freed pages back to the system (JavaScriptCore keeps them for reuse otherwise)
    Bun.shrink();
  }, CHECK_MS).unref();
}
