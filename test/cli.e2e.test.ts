// DESIGN §3 admin commands, end to end: each runs as its own process against the database of a
// running server, and what it does takes effect on that server's next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { engine, runCli, startServer, type CliResult, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 10);
const username = () => `cli_${uniq()}`;
const ACCOUNT_KEY = /^wl_acct_[A-Za-z0-9]{32,}$/;
const UNAUTHORIZED = { statusCode: 401, error: "Unauthorized", message: "Invalid API key" };

/** `--json`: exit 0 and exactly one JSON object on one line of stdout, nothing else. */
function oneJson(r: CliResult): any {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.endsWith("\n")).toBe(true);
  expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
  const value = JSON.parse(r.stdout);
  expect(value !== null && typeof value === "object" && !Array.isArray(value)).toBe(true);
  return value;
}

/** The message line of stderr: the usage line follows it. */
const firstLine = (stderr: string) => stderr.split("\n")[0];

/** DESIGN §3 with --json: every error is exactly {"error":{"code","message"}} on stdout, exit 2, nothing on stderr. */
function jsonError(r: CliResult, code: string, names: string) {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stderr).toBe("");
  expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
  const body = JSON.parse(r.stdout);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toContain(names);
  return body.error.message as string;
}

const usageError = (r: CliResult, names: string) => jsonError(r, "usage", names);

/** Without --json: one line on stderr naming the culprit (a usage error adds the usage line), exit 2, no stack. */
function textError(r: CliResult, names: string) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe("");
  expect(firstLine(r.stderr)).toStartWith("waitlist: ");
  expect(firstLine(r.stderr)).toContain(names);
  expect(r.stderr).not.toMatch(/\n\s+at |\.ts:\d+/);
}

const me = (key: string) => s.request("GET", "/api/v1/me", { key });

async function createAccount(...extra: string[]) {
  const name = username();
  const out = oneJson(await s.cli("account", "create", "--username", name, "--json", ...extra));
  return { username: name, id: out.account.id as string, key: out.api_key as string, out };
}

describe("account create", () => {
  test("prints exactly {account:{id,username,plan}, api_key} on one line; plan defaults to business", async () => {
    const name = username();
    const r = await s.cli("account", "create", "--username", name, "--json");
    const out = oneJson(r);
    expect(Object.keys(out).sort()).toEqual(["account", "api_key"]);
    expect(Object.keys(out.account).sort()).toEqual(["id", "plan", "username"]);
    expect(out.account.username).toBe(name);
    expect(out.account.plan).toBe("business");
    expect(typeof out.account.id).toBe("string");
    expect(out.account.id.length).toBeGreaterThan(0);
    expect(out.api_key).toMatch(ACCOUNT_KEY);
  });

  test("the new key works on the running server's next request, with 10 AI credits by default", async () => {
    const a = await createAccount();
    const r = await me(a.key);
    expect(r.status).toBe(200);
    expect(r.body.data.account).toEqual({ id: a.id, username: a.username });
    expect(r.body.data.plan).toEqual({ name: "Business", api_access: true });
    expect(r.body.data.ai_credits.remaining).toBe(10);
  });

  test("--ai-credits 3 starts the account with 3 credits; --label L names its key L", async () => {
    const a = await createAccount("--ai-credits", "3", "--label", "ci deploys");
    const r = await me(a.key);
    expect(r.status).toBe(200);
    expect(r.body.data.ai_credits.remaining).toBe(3);
    expect(r.body.data.api_key.name).toBe("ci deploys");
  });

  test("--plan sets the plan printed and served", async () => {
    const a = await createAccount("--plan", "growth");
    expect(a.out.account.plan).toBe("growth");
    expect((await me(a.key)).body.data.plan).toEqual({ name: "Growth", api_access: true });
  });

  test("DATABASE_URL works in place of --db", async () => {
    const name = username();
    const out = oneJson(await runCli(["account", "create", "--username", name, "--json"], { DATABASE_URL: s.dbUrl }));
    const r = await me(out.api_key);
    expect(r.status).toBe(200);
    expect(r.body.data.account.username).toBe(name);
  });
});

describe("account set-plan", () => {
  test("each plan shows its name, API access and waitlist maximum on the very next request", async () => {
    const a = await createAccount();
    const expected: [string, { name: string; api_access: boolean }, number | "unlimited"][] = [
      ["free", { name: "Free", api_access: false }, 1],
      ["pro", { name: "Pro", api_access: true }, 10],
      ["launch", { name: "Launch", api_access: false }, 3],
      ["growth", { name: "Growth", api_access: true }, 25],
      ["business", { name: "Business", api_access: true }, "unlimited"],
    ];
    for (const [plan, shown, max] of expected) {
      oneJson(await s.cli("account", "set-plan", "--username", a.username, "--plan", plan, "--json"));
      const r = await me(a.key);
      expect(r.status, plan).toBe(200);
      expect(r.body.data.plan, plan).toEqual(shown);
      expect(r.body.data.waitlists.max, plan).toBe(max);
    }
  });
});

describe("account credits", () => {
  test("--set 7 makes ai_credits.remaining 7 on a paid plan", async () => {
    const a = await createAccount("--plan", "growth");
    oneJson(await s.cli("account", "credits", "--username", a.username, "--set", "7", "--json"));
    expect((await me(a.key)).body.data.ai_credits.remaining).toBe(7);
  });

  test("a free account has no AI: credits --set 3 is refused (exit 2, saying why) instead of printing a 3 /me won't show", async () => {
    const a = await createAccount("--plan", "free");
    expect((await me(a.key)).body.data.ai_credits.remaining).toBe(0);
    const message = jsonError(await s.cli("account", "credits", "--username", a.username, "--set", "3", "--json"), "plan_has_no_ai", "free");
    expect(message).toContain("no AI");
    expect((await me(a.key)).body.data.ai_credits.remaining).toBe(0);
    // 0 is what the service shows, so setting it is fine
    expect(oneJson(await s.cli("account", "credits", "--username", a.username, "--set", "0", "--json")).account.ai_credits).toBe(0);
  });

  test("moving a paid account to free shows 0 remaining", async () => {
    const a = await createAccount();
    oneJson(await s.cli("account", "credits", "--username", a.username, "--set", "7", "--json"));
    oneJson(await s.cli("account", "set-plan", "--username", a.username, "--plan", "free", "--json"));
    expect((await me(a.key)).body.data.ai_credits.remaining).toBe(0);
  });
});

describe("key create and key revoke", () => {
  test("key create prints exactly {id, name, api_key} and the key works at once under its label", async () => {
    const a = await createAccount();
    const out = oneJson(await s.cli("key", "create", "--username", a.username, "--label", "backup job", "--json"));
    expect(Object.keys(out).sort()).toEqual(["api_key", "id", "name"]);
    expect(out.name).toBe("backup job");
    expect(typeof out.id).toBe("string");
    expect(out.api_key).toMatch(ACCOUNT_KEY);
    expect(out.api_key).not.toBe(a.key);
    const r = await me(out.api_key);
    expect(r.status).toBe(200);
    expect(r.body.data.account.username).toBe(a.username);
    expect(r.body.data.api_key.name).toBe("backup job");
  });

  test("a revoked key gets the byte-identical 401 of an unknown key; the account's other keys still work", async () => {
    const a = await createAccount();
    const extra = oneJson(await s.cli("key", "create", "--username", a.username, "--label", "temp", "--json"));
    expect((await me(extra.api_key)).status).toBe(200);
    oneJson(await s.cli("key", "revoke", "--id", extra.id, "--json"));
    const revoked = await me(extra.api_key);
    const unknown = await me(`wl_acct_${"x".repeat(43)}`);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual(UNAUTHORIZED);
    expect(unknown.status).toBe(401);
    expect(revoked.text).toBe(unknown.text);
    expect((await me(a.key)).status).toBe(200);
  });
});

describe("waitlist-key", () => {
  test("prints exactly {api_key:wl_...}; the key reads its waitlist; running it again replaces the key and the old one gets 401", async () => {
    const a = await createAccount();
    const created = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Cli ${uniq()}` } });
    expect(created.status).toBe(201);
    const wl = created.body.data.waitlist.key as string;

    const first = oneJson(await s.cli("waitlist-key", "--waitlist", wl, "--json"));
    expect(Object.keys(first)).toEqual(["api_key"]);
    expect(first.api_key).toMatch(/^wl_[A-Za-z0-9]{32,}$/);
    const settings = await s.request("GET", `/api/v1/waitlist/${wl}/settings`, { key: first.api_key });
    expect(settings.status).toBe(200);
    expect(settings.body.success).toBe(true);

    const second = oneJson(await s.cli("waitlist-key", "--waitlist", wl, "--json"));
    expect(second.api_key).toMatch(/^wl_[A-Za-z0-9]{32,}$/);
    expect(second.api_key).not.toBe(first.api_key);
    expect((await s.request("GET", `/api/v1/waitlist/${wl}/settings`, { key: second.api_key })).status).toBe(200);
    const old = await s.request("GET", `/api/v1/waitlist/${wl}/settings`, { key: first.api_key });
    const unknown = await s.request("GET", `/api/v1/waitlist/${wl}/settings`, { key: `wl_${"y".repeat(43)}` });
    expect(old.status).toBe(401);
    expect(old.body).toEqual(UNAUTHORIZED);
    expect(old.text).toBe(unknown.text);
  });
});

describe("usage errors exit 2: with --json one JSON error on stdout", () => {
  test("unknown command, unknown subcommand, missing required flag, unknown flag, bad --plan, negative --ai-credits", async () => {
    const name = username();
    const [command, sub, noUsername, noId, unknownFlag, badPlan, negative] = await Promise.all([
      s.cli("frobnicate", "--json"),
      s.cli("account", "frobnicate", "--json"),
      s.cli("account", "create", "--json"),
      s.cli("key", "revoke", "--json"),
      s.cli("account", "create", "--username", name, "--colour", "red", "--json"),
      s.cli("account", "create", "--username", name, "--plan", "platinum", "--json"),
      s.cli("account", "create", "--username", name, "--ai-credits", "-1", "--json"),
    ]);
    usageError(command, "frobnicate");
    usageError(sub, "frobnicate");
    usageError(noUsername, "--username");
    usageError(noId, "--id");
    usageError(unknownFlag, "--colour");
    usageError(badPlan, "--plan");
    usageError(negative, "--ai-credits");
    // none of the refused creates made the account
    expect((await s.cli("account", "create", "--username", name, "--json")).code).toBe(0);
  });
});

describe("refusals exit 2 like every other error (DESIGN §3)", () => {
  test("a taken username, set-plan for an unknown user, revoking an unknown key id: one JSON error each", async () => {
    const a = await createAccount();
    const ghost = username();
    const [duplicate, unknownUser, unknownKey] = await Promise.all([
      s.cli("account", "create", "--username", a.username, "--json"),
      s.cli("account", "set-plan", "--username", ghost, "--plan", "pro", "--json"),
      s.cli("key", "revoke", "--id", "key_doesnotexist", "--json"),
    ]);
    jsonError(duplicate, "conflict", a.username);
    jsonError(unknownUser, "not_found", ghost);
    jsonError(unknownKey, "not_found", "key_doesnotexist");
    // the refused duplicate left the original account and key alone
    const r = await me(a.key);
    expect(r.status).toBe(200);
    expect(r.body.data.plan.name).toBe("Business");
  });

  test("without --json a refusal is one line on stderr and nothing on stdout", async () => {
    const ghost = username();
    const r = await s.cli("account", "set-plan", "--username", ghost, "--plan", "pro");
    textError(r, ghost);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("backup", () => {
  // the embedded database's snapshot; on PostgreSQL backup refuses, pointing at pg_dump (test/backup.e2e.test.ts)
  test.skipIf(engine === "pg")("while the server runs, writes a valid SQLite file (mode 0600) with the accounts and prints what it holds; the same path again exits 2 unless --force", async () => {
    const a = await createAccount();
    const b = await createAccount("--plan", "free");
    const wl = await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Backup ${uniq()}` } });
    expect(wl.status).toBe(201);
    const file = join(s.dir, "backups", `snapshot-${uniq()}.db`);
    const out = oneJson(await s.cli("backup", "--to", file, "--json"));
    expect(Object.keys(out).sort()).toEqual(["backup", "bytes", "subscribers", "waitlists"]);
    expect(out.backup).toBe(file);
    expect(out.bytes).toBe(statSync(file).size);
    expect(out.bytes).toBeGreaterThan(0);
    expect(out.waitlists).toBeGreaterThanOrEqual(1);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const copy = createClient({ url: `file:${file}` });
    try {
      const rows = await copy.execute({ sql: "SELECT username, plan FROM accounts WHERE username IN (?, ?) ORDER BY plan", args: [a.username, b.username] });
      expect(rows.rows.map((row) => ({ username: row.username, plan: row.plan }))).toEqual([
        { username: a.username, plan: "business" },
        { username: b.username, plan: "free" },
      ]);
      expect(Number((await copy.execute("SELECT count(*) FROM waitlists")).rows[0][0])).toBe(out.waitlists);
    } finally {
      copy.close();
    }

    jsonError(await s.cli("backup", "--to", file, "--json"), "exists", file);
    expect(statSync(file).size).toBe(out.bytes);
    const forced = oneJson(await s.cli("backup", "--to", file, "--force", "--json"));
    expect(forced.backup).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // no partial files are left beside it
    expect(readdirSync(join(s.dir, "backups")).filter((f) => f.includes(".partial"))).toEqual([]);
    // the server kept serving throughout
    expect((await me(a.key)).status).toBe(200);
  });
});

describe("a CLI that explains itself", () => {
  test("--version prints the version, commit, schema and Bun on one line; version --json the same as an object", async () => {
    const pkg = await Bun.file(join(import.meta.dir, "..", "package.json")).json();
    const line = await runCli(["--version"]);
    expect(line.code).toBe(0);
    expect(line.stdout).toMatch(new RegExp(`^waitlist ${pkg.version.replace(/\./g, "\\.")} \\(commit [0-9a-f]{7,}|unknown, schema \\d+, pg schema \\d+, bun ${Bun.version.replace(/\./g, "\\.")}\\)\n$`));
    const v = oneJson(await runCli(["version", "--json"]));
    expect(Object.keys(v).sort()).toEqual(["bun", "commit", "pg_schema", "schema", "version"]);
    expect(v.version).toBe(pkg.version);
    expect(v.bun).toBe(Bun.version);
    const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: import.meta.dir }).stdout.toString().trim();
    expect(v.commit).toBe(git || "unknown");
    // the binary's schema version is the number of embedded migrations
    const { migrations, pgMigrations } = await import("../src/db/migrations.gen");
    expect(v.schema).toBe(migrations.length);
    expect(v.pg_schema).toBe(pgMigrations.length);
    expect(line.stdout).toContain(`commit ${v.commit}, schema ${v.schema},`);
  });

  test("help lists every command; --help on each command lists its flags with their defaults", async () => {
    const help = await runCli(["help"]);
    expect(help.code).toBe(0);
    for (const name of ["serve", "account create", "account set-plan", "account credits", "key create", "key revoke", "waitlist-key", "backup", "restore", "doctor", "version", "help"]) {
      expect(help.stdout).toContain(`  ${name}`);
    }
    const create = await runCli(["account", "create", "--help"]);
    expect(create.code).toBe(0);
    expect(create.stdout).toStartWith("usage: waitlist account create --username NAME [--plan ");
    expect(create.stdout).toMatch(/--plan \S+ +the plan \(default: business\)/);
    expect(create.stdout).toMatch(/--ai-credits N +.*\(default: 10\)/);
    expect(create.stdout).toMatch(/--db URL +.*\(default: file:\.\/data\/waitlist\.db\)/);
    expect((await runCli(["help", "account", "create"])).stdout).toBe(create.stdout);
    const serve = await runCli(["serve", "--help"]);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toMatch(/--port VALUE +.*\[PORT\] \(default: 3000\)/);
    expect(serve.stdout).toMatch(/--host VALUE +.*\[HOST\] \(default: 0\.0\.0\.0\)/);
    expect(serve.stdout).toContain("[BACKUP_DIR]");
    // issue 43: booleans as the README writes them, and every flag described
    expect(serve.stdout).toMatch(/--rate-limits VALUE +off: .*\[RATE_LIMITS\] \(default: on\)/);
    expect(serve.stdout).toMatch(/--trust-proxy VALUE +.*\[TRUST_PROXY\] \(default: off\)/);
    expect(serve.stdout).not.toMatch(/default: (true|false)/);
    for (const line of serve.stdout.split("\n").filter((l) => l.startsWith("  --"))) expect(line, line).toMatch(/^ {2}--\S+ VALUE +[^[\s]/);
    // a bad value of a boolean flag names the flag (not "an unexpected argument"): one line, exit 2
    const bad = await runCli(["serve", "--rate-limits", "maybe"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")[0]).toBe('waitlist: --rate-limits: expected true/false or on/off, got "maybe"');
    for (const argv of [["backup", "--help"], ["restore", "--help"], ["doctor", "--help"], ["key", "revoke", "--help"], ["waitlist-key", "--help"], ["version", "--help"], ["account", "credits", "--help"]]) {
      const r = await runCli(argv);
      expect(r.code, argv.join(" ")).toBe(0);
      expect(r.stdout, argv.join(" ")).toStartWith(`usage: waitlist ${argv.filter((a) => a !== "--help").join(" ")}`);
      expect(r.stdout, argv.join(" ")).toContain("flags:");
    }
    expect((await runCli(["backup", "--help"])).stdout).toMatch(/--force +replace FILE if it exists/);
    const group = await runCli(["account", "--help"]);
    expect(group.code).toBe(0);
    for (const name of ["account create", "account set-plan", "account credits"]) expect(group.stdout).toContain(`  ${name}`);
  });

  test("an unknown command or flag exits 2 with the usage line and the nearest valid name", async () => {
    const flag = await s.cli("account", "create", "--username", username(), "--plna", "free");
    textError(flag, "unknown flag --plna (did you mean --plan?)");
    expect(flag.stderr.split("\n")[1]).toStartWith("usage: waitlist account create --username NAME");
    textError(await runCli(["acount", "create"]), 'unknown command "acount" (did you mean account?)');
    textError(await runCli(["account", "set-plna"]), "(did you mean account set-plan?)");
    textError(await runCli(["bakup", "--to", "x.db"]), "(did you mean backup?)");
    textError(await runCli(["serve", "--prot", "0"]), "unknown flag --prot (did you mean --port?)");
    expect(usageError(await runCli(["backup", "--froce", "--json"]), "did you mean --force?")).toBeTruthy();
  });

  test("a failed command leaves no data folder or database behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waitlist-cli-"));
    try {
      const dbUrl = `file:${join(dir, "data", "nested", "w.db")}`;
      // one after another: commands run at the same moment on a new path each list the folders missing when they
      // start, so one that started after another had made them leaves them to it (CI saw "data" stay once)
      for (const args of [
        ["account", "set-plan", "--username", "ghost", "--plan", "pro", "--db", dbUrl, "--json"],
        ["key", "revoke", "--id", "key_nope", "--db", dbUrl],
        ["waitlist-key", "--waitlist", "nope", "--db", dbUrl, "--json"],
      ]) {
        const r = await runCli(args);
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(readdirSync(dir)).toEqual([]);
      }
      // a usage error never gets as far as the database
      expect((await runCli(["account", "create", "--username", "x", "--plan", "gold", "--db", dbUrl])).code).toBe(2);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("--json keeps logs off stdout", () => {
  test("at LOG_LEVEL=debug every admin command prints only its one JSON object on stdout", async () => {
    const env = { LOG_LEVEL: "debug", DATABASE_URL: s.dbUrl };
    const name = username();
    const run = (...args: string[]) => runCli([...args, "--json"], env);
    const results: Record<string, any> = {};
    results.create = oneJson(await run("account", "create", "--username", name));
    results.setPlan = oneJson(await run("account", "set-plan", "--username", name, "--plan", "growth"));
    results.credits = oneJson(await run("account", "credits", "--username", name, "--set", "4"));
    results.key = oneJson(await run("key", "create", "--username", name, "--label", "logs"));
    results.revoke = oneJson(await run("key", "revoke", "--id", results.key.id));
    const wl = await s.request("POST", "/api/v1/waitlists", { key: results.create.api_key, body: { name: `Logs ${uniq()}` } });
    expect(wl.status).toBe(201);
    results.waitlistKey = oneJson(await run("waitlist-key", "--waitlist", wl.body.data.waitlist.key));
    if (engine === "sqlite") {
      const file = join(s.dir, "backups", `logs-${uniq()}.db`);
      results.backup = oneJson(await run("backup", "--to", file));
      expect(existsSync(file)).toBe(true);
    }
    for (const [command, value] of Object.entries(results)) {
      expect(value, command).not.toHaveProperty("level");
      expect(value, command).not.toHaveProperty("msg");
    }
  });
});
