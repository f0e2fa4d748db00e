// A resident-memory budget for the server. JavaScriptCore sizes its heap by the machine's RAM and,
// under sustained load, lets garbage pile up to ~80 MB before collecting it; on a small VPS that is
// memory the database's page cache could use. Once a second, past the budget, a full collection runs
// (~10 ms at that heap size; ~4% of sign-up throughput at full load, nothing when idle).
const CHECK_MS = 1_000;

export function keepMemoryNear(budgetBytes: number): void {
  setInterval(() => {
    if (process.memoryUsage.rss() > budgetBytes) Bun.gc(true);
  }, CHECK_MS).unref();
}
