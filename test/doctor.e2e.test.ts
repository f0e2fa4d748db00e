// Issue 17: `waitlist doctor` checks what a production instance needs, one line each (ok / warn / fail), a JSON
// form with --json, exit 1 on any fail. Real SMTP servers (with and without AUTH) answer its EHLO.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { startSmtp, type Smtp } from "./support/peers";
import { openDatabase } from "../src/db/open";
import { scratchPgUrl } from "./support/pg";
import { runCli, startServer, type TestServer } from "./support/server";

let dir: string;
let smtp: Smtp;
let authSmtp: SMTPServer;
let authPort: number;
const servers: TestServer[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waitlist-doctor-"));
  smtp = await startSmtp();
  authSmtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "mailer" && auth.password === "s3cret") return callback(null, { user: "mailer" });
      callback(new Error("invalid credentials"));
    },
  });
  authSmtp.on("error", () => {});
  await new Promise<void>((resolve) => authSmtp.listen(0, "127.0.0.1", resolve));
  authPort = (authSmtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.stop();
  await smtp?.close();
  await new Promise<void>((resolve) => (authSmtp ? authSmtp.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  message: string;
}

async function doctor(env: Record<string, string>) {
  const r = await runCli(["doctor", "--json"], env);
  expect(r.stderr).toBe("");
  const checks = new Map<string, Check>((r.json.checks as Check[]).map((c) => [c.name, c]));
  return { code: r.code, ok: r.json.ok as boolean, checks, json: r.json };
}

/** A database made by the CLI in a folder of its own, and a production-like environment around it. */
async function production(name: string, extra: Record<string, string> = {}) {
  const url = `file:${join(dir, name, "data", "w.db")}`;
  expect((await runCli(["account", "create", "--username", "doc", "--db", url, "--json"])).code).toBe(0);
  return { DATABASE_URL: url, BASE_URL: "https://wl.example.com", SMTP_URL: smtp.url, MAIL_FROM: "Launch <hello@example.com>", ...extra };
}

describe("doctor", () => {
  test("a sound configuration: every check ok, exit 0; the text form is one line per check", async () => {
    const backups = join(dir, "sound", "backups");
    const env = await production("sound", { BACKUP_DIR: backups });
    expect((await runCli(["backup", "--to", join(backups, "b.db"), "--db", env.DATABASE_URL])).code).toBe(0);
    const { code, ok, checks } = await doctor(env);
    expect([...checks.keys()].sort()).toEqual(["backups", "base_url", "database", "disk", "files", "mail_from", "schema", "server", "smtp", "trust_proxy"]);
    for (const c of checks.values()) expect(c.status === "ok" || (c.name === "disk" && c.status === "warn"), `${c.name}: ${c.message}`).toBe(true);
    expect(code).toBe(0);
    expect(ok).toBe(true);
    expect(checks.get("database")!.message).toContain("opens and is writable");
    expect(checks.get("schema")!.message).toMatch(/^schema \d+ is current$/);
    expect(checks.get("smtp")!.message).toContain("answers EHLO");
    expect(checks.get("files")!.message).toMatch(/^database [\d.]+ [KMG]?B, WAL [\d.]+ [KMG]?B$/);
    expect(checks.get("disk")!.message).toContain("free");
    expect(checks.get("backups")!.message).toMatch(/newest backup in .* is \d+ min old/);

    const text = await runCli(["doctor"], env);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(checks.size);
    for (const line of lines) expect(line).toMatch(/^(ok|warn|fail) +[a-z_]+ +\S/);
  });

  test("SMTP with AUTH: the right login is ok, a wrong one fails with exit 1", async () => {
    const good = await doctor(await production("auth-good", { SMTP_URL: `smtp://mailer:s3cret@127.0.0.1:${authPort}` }));
    expect(good.checks.get("smtp")).toMatchObject({ status: "ok", message: `127.0.0.1:${authPort} answers EHLO and accepts the login` });
    expect(good.code).toBe(0);
    const bad = await doctor(await production("auth-bad", { SMTP_URL: `smtp://mailer:wrong@127.0.0.1:${authPort}` }));
    expect(bad.checks.get("smtp")!.status).toBe("fail");
    expect(bad.code).toBe(1);
    expect(bad.ok).toBe(false);
  });

  test("an SMTP server that does not answer fails within the short timeout", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const started = Date.now();
    const r = await doctor(await production("smtp-down", { SMTP_URL: `smtp://127.0.0.1:${port}` }));
    expect(r.checks.get("smtp")!.status).toBe("fail");
    expect(r.checks.get("smtp")!.message).toContain(`127.0.0.1:${port}`);
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test("BASE_URL on localhost with SMTP set warns; MAIL_FROM at localhost fails", async () => {
    const env = await production("localhost", { BASE_URL: "http://localhost:3000", MAIL_FROM: "Waitlist <noreply@localhost>" });
    const r = await doctor(env);
    expect(r.checks.get("base_url")!.status).toBe("warn");
    expect(r.checks.get("base_url")!.message).toContain("localhost");
    expect(r.checks.get("mail_from")!.status).toBe("fail");
    expect(r.code).toBe(1);
  });

  test("a missing database fails and doctor creates nothing; a stale backup folder warns or fails", async () => {
    const missing = join(dir, "missing", "data", "w.db");
    const r = await doctor({ DATABASE_URL: `file:${missing}`, BASE_URL: "https://wl.example.com" });
    expect(r.checks.get("database")!.status).toBe("fail");
    expect(r.code).toBe(1);
    expect(await Bun.file(missing).exists()).toBe(false);

    const backups = join(dir, "stale", "backups");
    const env = await production("stale", { BACKUP_DIR: backups });
    const file = join(backups, "old.db");
    expect((await runCli(["backup", "--to", file, "--db", env.DATABASE_URL])).code).toBe(0);
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
    utimesSync(file, threeDaysAgo, threeDaysAgo);
    const stale = await doctor(env);
    expect(stale.checks.get("backups")).toMatchObject({ status: "fail", message: expect.stringContaining("3 days old") });
    const empty = await doctor({ ...env, BACKUP_DIR: join(dir, "stale", "nothing-here") });
    expect(empty.checks.get("backups")!.status).toBe("fail");
  });

  test("TRUST_PROXY: requests through a local proxy with TRUST_PROXY off fail the check; on, it is ok", async () => {
    const s = await startServer();
    servers.push(s);
    // the test client is on loopback, as a reverse proxy on the same host is
    expect((await s.request("GET", "/healthz", { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(200);
    const running = await doctor({ DATABASE_URL: s.dbUrl, BASE_URL: "https://wl.example.com" });
    expect(running.checks.get("server")!.message).toContain(`pid ${s.proc.pid}`);
    // the server records what it saw at most once a minute, and at its stop
    expect(await s.stop({ keep: true })).toBe(0);
    const off = await doctor({ DATABASE_URL: s.dbUrl, BASE_URL: "https://wl.example.com" });
    expect(off.checks.get("trust_proxy")!.status).toBe("fail");
    expect(off.checks.get("trust_proxy")!.message).toContain("TRUST_PROXY is off");
    expect(off.checks.get("server")!.message).toBe("no server is running on this database");
    const on = await doctor({ DATABASE_URL: s.dbUrl, BASE_URL: "https://wl.example.com", TRUST_PROXY: "true" });
    expect(on.checks.get("trust_proxy")!.status).toBe("ok");
    rmSync(s.dir, { recursive: true, force: true });
  });

  test("PostgreSQL (issue 18): reachable, writable and the schema current, said as PostgreSQL; no file sizes; the running server seen", async () => {
    const url = await scratchPgUrl();
    const env = { BASE_URL: "https://wl.example.com", MAIL_FROM: "Launch <hello@example.com>" };
    const empty = await doctor({ ...env, DATABASE_URL: url });
    expect(empty.code).toBe(1);
    expect(empty.checks.get("database")).toMatchObject({ status: "fail" });
    expect(empty.checks.get("database")!.message).toContain("PostgreSQL");
    expect(empty.checks.get("database")!.message).toContain("no waitlist schema");
    const unreachable = await doctor({ ...env, DATABASE_URL: "postgres://u:secret@127.0.0.1:1/none" });
    expect(unreachable.checks.get("database")!.message).toMatch(/^cannot reach PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/none: /);
    expect(unreachable.checks.get("database")!.message).not.toContain("secret");

    await (await openDatabase({ url, poolSize: 2 })).close(); // what serve does at its first start: the migrations
    const sound = await doctor({ ...env, DATABASE_URL: url });
    expect(sound.checks.get("database")).toMatchObject({ status: "ok" });
    expect(sound.checks.get("database")!.message).toMatch(/^PostgreSQL at .* answers and is writable$/);
    expect(sound.checks.get("schema")!.message).toMatch(/^PostgreSQL schema \d+ is current$/);
    // issue 43: the server's version against the oldest supported (the run's servers are 15 and 18)
    expect(sound.checks.get("postgres")).toMatchObject({ status: "ok" });
    expect(sound.checks.get("postgres")!.message).toMatch(/^PostgreSQL 1[5-9][.\d]* \(14 or newer is supported\)$/);
    expect(sound.checks.has("files")).toBe(false);
    expect(sound.checks.has("disk")).toBe(false);
    expect(sound.checks.get("server")!.message).toBe("no server is running on this database");

    const s = await startServer({ dbUrl: url });
    servers.push(s);
    const running = await doctor({ ...env, DATABASE_URL: url });
    expect(running.checks.get("server")!.message).toContain(`running: pid ${s.proc.pid}`);
    await s.stop();
    const after = await doctor({ ...env, DATABASE_URL: url });
    expect(after.checks.get("server")!.message).toBe("no server is running on this database");
  });
});
