// PostgreSQL's driver (postgres 3.4.9), mended where it loses a connection: its src/connection.js is rewritten in
// node_modules after every install (`postinstall`: scripts/mend-driver.ts), which the server from source and the
// tests load, and again as the binary is bundled (scripts/build.ts), in case an install skipped its scripts. (A
// runtime Bun.plugin would do it at load time, but with one registered Bun left the macro of
// subscribers/email.ts unexpanded in some freshly transpiled files.) The fixes are the ones proposed upstream
// (porsager/postgres#1168, #1209; open).
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

/** The driver's connection.js with the fixes applied (as it is if they are); throws when it is not the source they were made for. */
export function mendConnectionSource(source: string): string {
  if (FIXES.every(({ replace }) => source.includes(replace))) return source;
  let out = source;
  for (const { find, times, replace } of FIXES) {
    const count = out.split(find).length - 1;
    if (count !== times) throw new Error(`postgres/src/connection.js: ${JSON.stringify(find.trim().split("\n")[0])} found ${count} times, not ${times}; check src/db/pg-driver.ts against the installed postgres`);
    out = out.replaceAll(find, replace);
  }
  return out;
}

/** The path of the installed driver's connection.js, from a checkout's root. */
export const CONNECTION_JS = "node_modules/postgres/src/connection.js";

/** For Bun.build: the driver bundled with the fixes. */
export const pgDriverFix: BunPlugin = {
  name: "postgres-connection-fix",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]postgres[\\/]src[\\/]connection\.js$/ }, async (args) => ({
      contents: mendConnectionSource(await Bun.file(args.path).text()),
      loader: "js",
    }));
  },
};
