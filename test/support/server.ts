// Test harness: the real server in a child process on a random port with its own temporary database, and the CLI.
// Every process and folder it makes is registered in ./cleanup (removed at the end of the run at the latest).
import { dirname, join } from "node:path";
import type { SQL } from "drizzle-orm";
import { openDatabase } from "../../src/db/open";
import { removeDir, tempDir, terminate, track } from "./cleanup";
import { scratchPgUrl } from "./pg";

/** The engine the suites run on: `sqlite` (embedded libSQL, the default) or `pg` (TEST_ENGINE=pg). */
export const engine: "sqlite" | "pg" = process.env.TEST_ENGINE === "pg" ? "pg" : "sqlite";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "src", "main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export interface Response {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServer {
  url: string;
  dbUrl: string;
  dir: string;
  logs: string[];
  proc: ReturnType<typeof Bun.spawn>;
  cli(...args: string[]): Promise<CliResult>;
  /** Runs one statement on the server's database directly (either engine), as its rows. */
  query<T = any>(statement: SQL): Promise<T[]>;
  /** Creates an account through the CLI and returns its id and key. */
  account(plan?: string, extra?: string[]): Promise<{ id: string; username: string; key: string }>;
  request(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Response>;
  /** SIGTERM and wait (SIGKILL after 15 s); `keep` leaves the folder and database for a restart with `startServer({ dbUrl })`. */
  stop(opts?: { keep?: boolean }): Promise<number>;
}

let counter = 0;

/** How long a server may take to say "listening" before it is killed and the start fails. */
const START_TIMEOUT_MS = 20_000;

/** Runs `waitlist` (src/main.ts under bun, or a built binary `bin`) with the given args and environment. */
export async function runCli(args: string[], env: Record<string, string> = {}, bin?: string): Promise<CliResult> {
  const command = bin ? [bin] : [process.execPath, MAIN];
  const proc = track(Bun.spawn([...command, ...args], { cwd: bin ? dirname(bin) : ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" }));
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: any = undefined;
  try {
    json = JSON.parse(stdout);
  } catch {}
  return { code, stdout, stderr, json };
}

export async function startServer(opts: { env?: Record<string, string>; args?: string[]; dbUrl?: string; bin?: string } = {}): Promise<TestServer> {
  const dir = tempDir("waitlist-test-");
  // TEST_ENGINE=pg runs the same suites on PostgreSQL (issue 18): a fresh database on the run's server
  const dbUrl = opts.dbUrl ?? (engine === "pg" ? await scratchPgUrl() : `file:${join(dir, "data", "waitlist.db")}`);
  const command = opts.bin ? [opts.bin] : [process.execPath, MAIN];
  const proc = track(Bun.spawn([...command, "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbUrl, ...(opts.args ?? [])], {
    cwd: opts.bin ? dirname(opts.bin) : ROOT,
    env: { ...process.env, LOG_LEVEL: "info", ...opts.env },
    stdout: "pipe",
    stderr: "pipe",
  }));
  const logs: string[] = [];
  let port = 0;
  let baseUrl = "";
  const listening = new Promise<void>((resolve, reject) => {
    (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
        buffer += decoder.decode(chunk);
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          logs.push(line);
          try {
            const entry = JSON.parse(line);
            if (entry.msg === "listening") {
              port = entry.port;
              baseUrl = entry.base_url;
              resolve();
            }
          } catch {}
        }
      }
      reject(new Error(`server exited before listening: ${logs.join("\n")}${await new Response(proc.stderr).text()}`));
    })();
  });
  let timer: Timer | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`server did not listen within ${START_TIMEOUT_MS} ms: ${logs.join("\n")}`)), START_TIMEOUT_MS);
  });
  try {
    await Promise.race([listening, timedOut]);
  } catch (err) {
    // a failed start leaves nothing behind: the process is killed, its folder removed
    proc.kill("SIGKILL");
    await proc.exited;
    removeDir(dir);
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const url = `http://127.0.0.1:${port}`;

  const server: TestServer = {
    url,
    dbUrl,
    dir,
    logs,
    proc,
    cli: (...args) => runCli([...args, "--db", dbUrl], {}, opts.bin),
    async query<T>(statement: SQL) {
      const db = await openDatabase({ url: dbUrl, poolSize: 1 });
      try {
        return await db.rows<T>(statement);
      } finally {
        await db.close();
      }
    },
    async account(plan = "business", extra = []) {
      const username = `user${++counter}_${Math.random().toString(36).slice(2, 8)}`;
      const r = await server.cli("account", "create", "--username", username, "--plan", plan, "--json", ...extra);
      if (r.code !== 0) throw new Error(`account create failed: ${r.code} ${r.stdout} ${r.stderr}`);
      return { id: r.json.account.id, username, key: r.json.api_key };
    },
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key !== undefined) headers["x-api-key"] = o.key;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(url + path, { method, headers, body, redirect: "manual" });
      const text = await res.text();
      let parsed: any = undefined;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async stop(o = {}) {
      const code = await terminate(proc);
      // with opts.dbUrl the database lives in another server's folder; this one's is empty
      if (!o.keep) removeDir(dir);
      return code;
    },
  };
  void baseUrl;
  return server;
}

/** Polls until `check` returns a truthy value or the deadline passes. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 5_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}
