// PostgreSQL's driver (postgres 3.4.9), mended where it loses a connection: a plugin that rewrites its
// src/connection.js as it loads, in the server from source (Bun.plugin, before the driver's first import) and in
// the binary (scripts/build.ts). The fixes are the ones proposed upstream (porsager/postgres#1168, #1209; open).
//
// Small writes wait for a setImmediate (`nextWriteTimer`) and collect in `chunk`. When the socket closes with a
// write waiting, the driver cancels the timer but keeps its handle and the bytes:
// - the handle stays non-null, so no later write is ever scheduled again: the reconnected connection's startup
//   message is never sent, and the query parked on it waits for good (a request with no answer; under a
//   PostgreSQL restart with load, several connections of the pool and every write queued behind them);
// - the bytes would go out first on the next connection, ahead of its startup message;
// - and a timer that fired already calls `socket.write` on the closed connection's null socket, a TypeError no
//   caller can catch, which ends the process (#1066, #1154, #1208).
import type { BunPlugin } from "bun";

/** Each fix: the text it replaces, how many times that text must occur, and its replacement. */
const FIXES: { find: string; times: number; replace: string }[] = [
  {
    find: "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n",
    times: 1,
    replace: "  function nextWrite(fn) {\n    if (!socket) return (chunk = nextWriteTimer = null, false)\n    const x = socket.write(chunk, fn)\n",
  },
  // terminate() and closed(), the two places that cancel the timer
  { find: "    clearImmediate(nextWriteTimer)\n", times: 2, replace: "    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n" },
];

/** The driver's connection.js with the fixes applied; throws when the source is not the one they were made for. */
export function mendConnectionSource(source: string): string {
  let out = source;
  for (const { find, times, replace } of FIXES) {
    const count = out.split(find).length - 1;
    if (count !== times) throw new Error(`postgres/src/connection.js: ${JSON.stringify(find.trim().split("\n")[0])} found ${count} times, not ${times}; check src/db/pg-driver.ts against the installed postgres`);
    out = out.replaceAll(find, replace);
  }
  return out;
}

export const pgDriverFix: BunPlugin = {
  name: "postgres-connection-fix",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]postgres[\\/]src[\\/]connection\.js$/ }, async (args) => ({
      contents: mendConnectionSource(await Bun.file(args.path).text()),
      loader: "js",
    }));
  },
};

let installed = false;

/** Registers the fix for this process; call it before anything imports `postgres` (a loaded module is not reloaded). */
export function installPgDriverFix(): void {
  if (installed) return;
  installed = true;
  Bun.plugin(pgDriverFix);
}
