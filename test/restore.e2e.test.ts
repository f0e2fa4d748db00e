// Issue 17: backup and restore that cannot lose data. A clean stop leaves the database file alone complete;
// restore refuses while a server has the database open, and after a stop swaps a backup in, keeping the old one.
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createClient } from "@libsql/client";
import { engine, runCli, startServer, type TestServer } from "./support/server";

const servers: TestServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "waitlist-restore-"));
  dirs.push(d);
  return d;
};
const uniq = () => Math.random().toString(36).slice(2, 10);

async function start(dbUrl?: string) {
  const s = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl });
  servers.push(s);
  dirs.push(s.dir);
  return s;
}

async function count(file: string, sql: string, args: string[] = []): Promise<number> {
  const c = createClient({ url: `file:${file}` });
  try {
    return Number((await c.execute({ sql, args })).rows[0][0]);
  } finally {
    c.close();
  }
}

// SQLite only: reads the embedded file copied without its WAL
test.skipIf(engine === "pg")("SIGTERM on a loaded server: the database file alone, copied without its WAL, holds every acknowledged sign-up", async () => {
  const s = await start();
  const dbFile = join(s.dir, "data", "waitlist.db");
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Durable ${uniq()}` } })).body.data.waitlist;
  const acknowledged: string[] = [];
  let stop = false;
  const lanes = Array.from({ length: 8 }, async (_, lane) => {
    for (let i = 0; !stop; i++) {
      const email = `lane${lane}-${i}@example.com`;
      try {
        const r = await s.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email } });
        if (r.status === 200) acknowledged.push(email);
      } catch {
        return; // the server stopped listening
      }
    }
  });
  while (acknowledged.length < 150) await Bun.sleep(5);
  const code = await s.stop({ keep: true });
  stop = true;
  await Promise.all(lanes);
  expect(code).toBe(0);
  expect(s.logs.some((l) => l.includes('"msg":"stopped"') && l.includes('"checkpointed":true'))).toBe(true);
  // wal_checkpoint(TRUNCATE) at the stop: whatever is left beside the file holds nothing
  expect(existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size : 0).toBe(0);

  const alone = join(tempDir(), "copy.db");
  copyFileSync(dbFile, alone);
  const c = createClient({ url: `file:${alone}` });
  try {
    const stored = new Set((await c.execute({ sql: "SELECT email FROM subscribers" })).rows.map((r) => String(r.email)));
    expect(acknowledged.filter((e) => !stored.has(e))).toEqual([]);
    expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
  } finally {
    c.close();
  }
});

// SQLite only: `restore` swaps embedded database files
describe.skipIf(engine === "pg")("restore", () => {
  test("refuses while a server has the database open, naming its pid; after the stop, swaps the backup in and keeps the old database beside it", async () => {
    const s = await start();
    const dbFile = join(s.dir, "data", "waitlist.db");
    const before = await s.account();
    const backup = join(s.dir, "backups", "before.db");
    expect((await s.cli("backup", "--to", backup, "--json")).code).toBe(0);
    const after = await s.account();

    const refused = await runCli(["restore", "--from", backup, "--db", s.dbUrl, "--json"]);
    expect(refused.code).toBe(2);
    expect(refused.json.error.code).toBe("server_running");
    expect(refused.json.error.message).toContain(`pid ${s.proc.pid}`);
    const text = await runCli(["restore", "--from", backup], { DATABASE_URL: s.dbUrl });
    expect(text.code).toBe(2);
    expect(text.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(text.stderr).toContain(`pid ${s.proc.pid}`);
    // nothing was touched: the server still knows the later account
    expect((await s.request("GET", "/api/v1/me", { key: after.key })).status).toBe(200);
    expect(readdirSync(dirname(dbFile)).filter((f) => f.includes("before-restore"))).toEqual([]);

    expect(await s.stop({ keep: true })).toBe(0);
    const restored = await runCli(["restore", "--from", backup, "--db", s.dbUrl, "--json"]);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    const out = restored.json;
    expect(out.restored).toBe(dbFile);
    expect(out.from).toBe(backup);
    expect(out.kept).toMatch(/waitlist\.db\.before-restore-\d{8}T\d{6}Z$/);
    expect(dirname(out.kept)).toBe(dirname(dbFile));
    expect(statSync(dbFile).mode & 0o777).toBe(0o600);
    // the kept database is complete on its own (its WAL was folded in): it has the later account
    expect(await count(out.kept, "SELECT count(*) FROM accounts WHERE username = ?", [after.username])).toBe(1);
    expect(await count(dbFile, "SELECT count(*) FROM accounts WHERE username = ?", [after.username])).toBe(0);

    // a server on the restored database serves the backup's state
    const again = await start(s.dbUrl);
    expect((await again.request("GET", "/api/v1/me", { key: before.key })).status).toBe(200);
    expect((await again.request("GET", "/api/v1/me", { key: after.key })).status).toBe(401);
    await again.stop();
  });

  test("refuses a damaged backup, a file that is not a waitlist database and one with a newer schema; the database is left as it was", async () => {
    const d = tempDir();
    const url = `file:${join(d, "data", "w.db")}`;
    expect((await runCli(["account", "create", "--username", "keep", "--db", url, "--json"])).code).toBe(0);
    const garbage = join(d, "garbage.db");
    writeFileSync(garbage, "not a database at all ".repeat(100));
    const other = join(d, "other.db");
    const o = createClient({ url: `file:${other}` });
    await o.execute("CREATE TABLE notes (x TEXT)");
    o.close();
    const newer = join(d, "newer.db");
    expect((await runCli(["backup", "--to", newer, "--db", url])).code).toBe(0);
    const schema = (await runCli(["version", "--json"])).json.schema as number;
    const n = createClient({ url: `file:${newer}` });
    await n.execute(`PRAGMA user_version = ${schema + 1}`);
    n.close();

    const cases: [string, string, string][] = [
      [garbage, "bad_backup", "is not a database"],
      [other, "bad_backup", "not a waitlist database"],
      [newer, "schema_too_new", `schema ${schema + 1}, newer than this binary's ${schema}`],
      [join(d, "missing.db"), "not_found", "does not exist"],
    ];
    for (const [file, code, words] of cases) {
      const r = await runCli(["restore", "--from", file, "--db", url, "--json"]);
      expect(r.code, file).toBe(2);
      expect(r.json.error.code, file).toBe(code);
      expect(r.json.error.message, file).toContain(words);
    }
    expect(readdirSync(join(d, "data")).filter((f) => f.includes("before-restore") || f.includes("restoring"))).toEqual([]);
    expect(await count(join(d, "data", "w.db"), "SELECT count(*) FROM accounts WHERE username = 'keep'")).toBe(1);
  });

  test("onto a missing database it just puts the backup in place (nothing to keep)", async () => {
    const d = tempDir();
    const source = `file:${join(d, "source", "w.db")}`;
    expect((await runCli(["account", "create", "--username", "carried", "--db", source, "--json"])).code).toBe(0);
    const backup = join(d, "b.db");
    expect((await runCli(["backup", "--to", backup, "--db", source, "--json"])).code).toBe(0);
    const target = join(d, "fresh", "data", "w.db");
    const r = await runCli(["restore", "--from", backup, "--db", `file:${target}`, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.kept).toBeNull();
    expect(existsSync(target)).toBe(true);
    expect(await count(target, "SELECT count(*) FROM accounts WHERE username = 'carried'")).toBe(1);
  });
});
