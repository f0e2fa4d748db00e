// A resident-memory budget for the server. JavaScriptCore sizes its heap by the machine's RAM and,
// under sustained load, lets garbage pile up (the heap grew ~8 MB a second under sign-ups, 24 to 62 MB in
// five seconds) before collecting it; on a small VPS that is memory the database's page cache could use.
// Past the budget, a full collection runs (synchronously: the only kind that is full and hands the freed
// pages back; Bun.gc(false) only asks for one, and the heap went on growing), at most once every three
// seconds: it stops the server for 25-35 ms under a full load, so a pause a second was most of a sign-up's p99.
// Bun.shrink() is not used here (only once at start, serve.ts): it also throws away every function's compiled
// code, which then compiles again; once a second under load that cost up to half the throughput of the reads
// (docs/decisions.md).
const CHECK_MS = 3_000;

export function keepMemoryNear(budgetBytes: number): void {
  setInterval(() => {
    if (process.memoryUsage.rss() > budgetBytes) Bun.gc(true);
  }, CHECK_MS).unref();
}
