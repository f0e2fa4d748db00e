// `waitlist backup --to FILE` (DESIGN §8): a consistent snapshot of a live database taken while sign-ups are
// being written; a server started on the snapshot finds consistent data.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { engine, runCli, startServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(() => s.stop());

// SQLite only: `backup` is VACUUM INTO of the embedded file (PostgreSQL is backed up with pg_dump)
test.skipIf(engine === "pg")("a backup taken during a burst of sign-ups restores to a consistent waitlist", async () => {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Backup ${Math.random().toString(36).slice(2, 8)}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  let written = 0;
  let stop = false;
  const writers = Array.from({ length: 4 }, async (_, lane) => {
    const codes: string[] = [];
    for (let i = 0; !stop; i++) {
      const referred = codes.length && i % 3 === 0 ? { referred_by: codes[i % codes.length] } : {};
      const r = await s.request("POST", `${path}/sign-up`, { key, body: { email: `lane${lane}-${i}@example.com`, metadata: referred } });
      expect(r.status).toBe(200);
      codes.push(r.body.referral_code);
      written++;
    }
  });
  while (written < 40) await Bun.sleep(5);
  const file = join(s.dir, "snapshot.db");
  const backup = await s.cli("backup", "--to", file, "--json");
  const atBackup = written;
  expect(backup.code).toBe(0);
  while (written < atBackup + 40) await Bun.sleep(5);
  stop = true;
  await Promise.all(writers);

  const restored = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: `file:${file}` });
  try {
    const stats = (await restored.request("GET", `${path}/stats`, { key })).body.data;
    // the snapshot holds every sign-up answered before it began, and none of the later ones
    expect(stats.subscribers_total).toBeGreaterThanOrEqual(40);
    expect(stats.subscribers_total).toBeLessThan(written);
    const rows: any[] = [];
    for (let page = 1; ; page++) {
      const r = (await restored.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=100&page=${page}`, { key })).body.data;
      rows.push(...r.subscribers);
      if (page >= r.pages) break;
    }
    expect(rows.length).toBe(stats.subscribers_total);
    // positions are 1..N and agree with points and referral credits inside the snapshot
    expect(rows.map((r) => r.position)).toEqual(rows.map((_, i) => i + 1));
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].points).toBeGreaterThanOrEqual(rows[i].points);
    const credits = rows.reduce((n, r) => n + r.referral_count, 0);
    expect(rows.reduce((n, r) => n + r.points, 0)).toBe(rows.length * 50 + credits * 30);
  } finally {
    await restored.stop();
    // the harness keeps the folder of a server started on a given database
    rmSync(restored.dir, { recursive: true, force: true });
  }
});

// SQLite only: `backup` is VACUUM INTO of the embedded file (PostgreSQL is backed up with pg_dump)
test.skipIf(engine === "pg")("with BACKUP_DIR set, backup without --to writes waitlist-<UTC time>.db there, mode 0600, and says what it holds", async () => {
  const dir = join(s.dir, "nightly");
  const r = await runCli(["backup", "--json"], { DATABASE_URL: s.dbUrl, BACKUP_DIR: dir });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.json.backup).toMatch(new RegExp(`^${dir}/waitlist-\\d{8}T\\d{6}Z\\.db$`));
  expect(statSync(r.json.backup).mode & 0o777).toBe(0o600);
  expect(r.json.bytes).toBe(statSync(r.json.backup).size);
  expect(typeof r.json.waitlists).toBe("number");
  expect(typeof r.json.subscribers).toBe("number");
  expect(readdirSync(dir)).toHaveLength(1);
  // without BACKUP_DIR, --to is required: a usage error
  const missing = await runCli(["backup", "--json"], { DATABASE_URL: s.dbUrl, BACKUP_DIR: "" });
  expect(missing.code).toBe(2);
  expect(missing.json.error.code).toBe("usage");
  expect(missing.json.error.message).toContain("--to");
});

test("PostgreSQL (issue 18): backup and restore refuse with exit 2 and one line pointing to pg_dump / pg_restore", async () => {
  const db = "postgres://u:secret@127.0.0.1:1/none";
  const backup = await runCli(["backup", "--to", join(s.dir, "pg.db"), "--db", db]);
  expect(backup.code).toBe(2);
  expect(backup.stderr.trim().split("\n")).toHaveLength(1);
  expect(backup.stderr).toContain("pg_dump");
  const restore = await runCli(["restore", "--from", join(s.dir, "pg.db"), "--db", db, "--json"]);
  expect(restore.code).toBe(2);
  expect(restore.json.error.code).toBe("unsupported");
  expect(restore.json.error.message).toContain("pg_restore");
});
