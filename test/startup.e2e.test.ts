// Issue 17: every start-up error is one line on stderr, exit code 2, no stack trace, and creates nothing; a second
// server on a used port refuses instead of sharing it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { startFakeModel } from "./support/peers";
import { engine, runCli, startServer, until, type CliResult, type TestServer } from "./support/server";

let s: TestServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waitlist-startup-"));
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Exit 2, nothing on stdout (no "listening"), exactly one line on stderr containing `words`, no stack trace. */
function oneLine(r: CliResult, words: string) {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toStartWith("waitlist: ");
  expect(lines[0]).toContain(words);
  expect(r.stderr).not.toMatch(/^\s+at |node_modules|\.ts:\d+/m);
}

/** `serve` on loopback with its own folder for the database (so it is visible whether anything was created). */
const serve = (env: Record<string, string>, ...args: string[]) => runCli(["serve", "--host", "127.0.0.1", "--port", "0", ...args], env);

describe("start-up errors: one line, exit 2, nothing created", () => {
  test("a second serve on a used port exits 2 saying it is already in use, and the first keeps serving", async () => {
    const port = new URL(s.url).port;
    const folder = join(dir, "second");
    const r = await serve({}, "--port", port, "--db", `file:${join(folder, "w.db")}`);
    oneLine(r, "already in use");
    expect(r.stderr).toContain(`port ${port}`);
    expect(existsSync(folder)).toBe(false);
    expect((await s.request("GET", "/healthz")).status).toBe(200);
  });

  test("a second serve on the same port and the same database refuses too and leaves the database as it was", async () => {
    const r = await runCli(["serve", "--host", "127.0.0.1", "--port", new URL(s.url).port, "--db", s.dbUrl]);
    oneLine(r, "already in use");
    expect((await s.request("GET", "/healthz")).status).toBe(200);
  });

  test("an invalid HOST names it", async () => {
    const folder = join(dir, "host");
    oneLine(await runCli(["serve", "--port", "0"], { HOST: "not a host!", DATABASE_URL: `file:${join(folder, "w.db")}` }), 'HOST "not a host!"');
    oneLine(await runCli(["serve", "--port", "0", "--host", "203.0.113.7", "--db", `file:${join(folder, "w.db")}`]), 'HOST "203.0.113.7"');
    expect(existsSync(folder)).toBe(false);
  });

  test("an unwritable data folder (a file stands where a folder should be)", async () => {
    const blocker = join(dir, "blocker");
    writeFileSync(blocker, "not a folder");
    oneLine(await serve({ DATABASE_URL: `file:${join(blocker, "data", "w.db")}` }), "cannot create or write the database");
    expect(readFileSync(blocker, "utf8")).toBe("not a folder");
  });

  test("a DATABASE_URL with an unknown scheme names the variable", async () => {
    oneLine(await serve({ DATABASE_URL: "mysql://db.example.com/waitlist" }), "DATABASE_URL");
    oneLine(await serve({}, "--db", "postgresx://x"), "--db");
  });

  test("an unreachable database server", async () => {
    // a port that was free a moment ago: nothing listens there
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const r = await serve({ DATABASE_URL: `postgres://waitlist:secret@127.0.0.1:${port}/waitlist` });
    // the password never reaches the message
    oneLine(r, `cannot reach the database server at postgres://127.0.0.1:${port}/waitlist`);
  });

  test("a corrupt database file is refused and left exactly as it was", async () => {
    const folder = join(dir, "corrupt");
    rmSync(folder, { recursive: true, force: true });
    const file = join(folder, "w.db");
    const garbage = "this is not an SQLite database ".repeat(200);
    await Bun.write(file, garbage);
    oneLine(await serve({ DATABASE_URL: `file:${file}` }), "is not a usable database");
    expect(readFileSync(file, "utf8")).toBe(garbage);
    expect(readdirSync(folder)).toEqual(["w.db"]);
    // admin commands say the same
    oneLine(await runCli(["account", "create", "--username", "x", "--db", `file:${file}`]), "is not a usable database");
  });

  test("a database whose schema is newer than the binary: 'schema N is newer than this binary's M: upgrade the binary'", async () => {
    const folder = join(dir, "newer");
    const url = `file:${join(folder, "w.db")}`;
    expect((await runCli(["account", "create", "--username", "future", "--db", url, "--json"])).code).toBe(0);
    const version = (await runCli(["version", "--json"])).json.schema as number;
    const client = createClient({ url });
    await client.execute(`PRAGMA user_version = ${version + 2}`);
    client.close();
    oneLine(await serve({ DATABASE_URL: url }), `schema ${version + 2} is newer than this binary's ${version}: upgrade the binary`);
    const cli = await runCli(["account", "create", "--username", "other", "--db", url, "--json"]);
    expect(cli.code).toBe(2);
    expect(cli.json).toEqual({ error: { code: "schema_too_new", message: `schema ${version + 2} is newer than this binary's ${version}: upgrade the binary` } });
  });
});

describe("the stop path", () => {
  // SQLite only: the stop ends with a WAL checkpoint of the embedded file
  test.skipIf(engine === "pg")("SIGTERM with a request that never finishes: the server exits 0 within the 15 s budget (systemd waits 20 s), the WAL checkpointed", async () => {
    const model = startFakeModel();
    const slow = await startServer({ env: { RATE_LIMITS: "off", AI_BASE_URL: model.url, AI_API_KEY: "sk-test", AI_MODEL: "m", AI_TIMEOUT_MS: "120000" } });
    try {
      const { key } = await slow.account();
      const w = (await slow.request("POST", "/api/v1/waitlists", { key, body: { name: "Slow stop" } })).body.data.waitlist;
      model.next({ kind: "hang" });
      const pending = slow.request("POST", `/api/v1/waitlist/${w.key}/landing-page/generate`, { key, body: { prompt: "never answered" } }).catch(() => null);
      await until(() => model.requests.length === 1, 5_000, "the model call");
      const started = Date.now();
      slow.proc.kill("SIGTERM");
      const code = await slow.proc.exited;
      const took = Date.now() - started;
      await pending;
      expect(code).toBe(0);
      expect(took).toBeLessThan(15_000);
      const stopped = slow.logs.map((l) => JSON.parse(l)).find((e) => e.msg === "stopped");
      expect(stopped).toMatchObject({ drained: false, checkpointed: true });
    } finally {
      if (slow.proc.exitCode === null) await slow.stop();
      rmSync(slow.dir, { recursive: true, force: true });
      model.stop();
    }
  });
});
