// PostgreSQL's driver as installed, mended by `postinstall` (src/db/pg-driver.ts): a connection whose socket
// closes while a write of its waits for the next turn reconnects and answers the next query. Unmended, the
// reconnected connection never sends its startup message and the query waits until the connect timeout, again
// and again (a request with no answer while PostgreSQL restarts under load), or the late write ends the process.
import { afterEach, expect, test } from "bun:test";
import net from "node:net";
import { join } from "node:path";
import postgres from "postgres";
import { CONNECTION_JS, mendConnectionSource } from "../src/db/pg/driver";
import { scratchPgUrl } from "./support/pg";

let sql: ReturnType<typeof postgres> | undefined;
afterEach(async () => {
  await sql?.end({ timeout: 1 });
  sql = undefined;
});

/** A pool of one connection whose sockets the test holds (the driver's `socket` option). */
async function pool(): Promise<{ sql: ReturnType<typeof postgres>; sockets: net.Socket[] }> {
  const url = new URL(await scratchPgUrl());
  const sockets: net.Socket[] = [];
  sql = postgres(url.href, {
    max: 1,
    connect_timeout: 5,
    fetch_types: false,
    onnotice: () => {},
    // the driver's `socket` option (a factory of connected sockets) is missing from its type definitions
    ...({
      socket: () => {
        const socket = net.connect(Number(url.port), url.hostname);
        sockets.push(socket);
        return socket;
      },
    } as object),
  });
  return { sql, sockets };
}

/** The query's answer, or "no answer" after `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => "no answer" as const)]);

test("a connection lost with a write waiting answers its next queries at once", async () => {
  const { sql, sockets } = await pool();
  expect([...(await sql`SELECT 1 AS n`)]).toEqual([{ n: 1 }]);
  for (let round = 0; round < 3; round++) {
    // the query's bytes wait for the next turn; the socket closes before they go
    const lost = sql`SELECT 2 AS n`.then(
      () => "answered",
      (e) => e.code,
    );
    sockets.at(-1)!.destroy();
    expect(await within(lost, 3_000)).toBe("CONNECTION_CLOSED");
    // the next query gets a new connection and its answer well within the connect timeout (5 s)
    expect(await within(sql`SELECT 3 AS n`.then((rows) => [...rows]), 3_000)).toEqual([{ n: 3 }]);
  }
  expect(sockets.length).toBe(4);
}, 30_000);

test("the fix leaves a mended source as it is, and refuses a driver source it was not made for", async () => {
  const installed = await Bun.file(join(import.meta.dir, "..", CONNECTION_JS)).text();
  expect(mendConnectionSource(installed)).toBe(installed);
  expect(() => mendConnectionSource("function nextWrite(fn) {}")).toThrow(/check src\/db\/pg-driver.ts against the installed postgres/);
});
