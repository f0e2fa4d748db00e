// `waitlist doctor`: checks what a production instance needs, one line each (ok / warn / fail); exit 1 on any fail.
// It reads the same environment as `serve` and never creates or migrates the database, on either engine (issue 18).
import { accessSync, constants, existsSync, readdirSync, statfsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SQL } from "bun";
import { createClient, type Client } from "@libsql/client";
import { loadConfig, type Config } from "../config";
import { DatabaseOpenError, databasePath, displayUrl, isPgUrl, SCHEMA_VERSION } from "../db/open";
import { schemaVersionOf } from "../db/sqlite/migrate";
import { databaseFileSizes } from "../db/sqlite/maintenance";
import { clientStore } from "../db/sqlite/store";
import { pgMigrations } from "../db/migrations.gen";
import { OLDEST_PG } from "../db/pg/version";
import { readTraffic, runningInstances, type MetaStore } from "./presence";
import type { Command } from "./command";

type Status = "ok" | "warn" | "fail";
interface Check {
  name: string;
  status: Status;
  message: string;
}

const SMTP_TIMEOUT_MS = 5_000;
const DAY = 86_400_000;
/** A proxy or a direct client seen this recently counts as how requests arrive now. */
const RECENT_MS = 7 * DAY;
const LOW_DISK = 64 * 1024 * 1024;
const TIGHT_DISK = 1024 * 1024 * 1024;

export const formatBytes = (n: number) => {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
};
const ago = (ms: number) => (ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : ms < 2 * DAY ? `${(ms / 3_600_000).toFixed(1)} h` : `${Math.round(ms / DAY)} days`);
const isLocalHost = (host: string) => host === "localhost" || host.endsWith(".localhost") || host.startsWith("127.") || host === "[::1]" || host === "0.0.0.0";

/** The database, opened for the checks that read it (presence, traffic). */
interface Opened {
  store: MetaStore;
  close(): Promise<void> | void;
}

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split("\n")[0];

async function databaseChecks(config: Config, checks: Check[]): Promise<Opened | null> {
  if (isPgUrl(config.databaseUrl)) return pgChecks(config, checks);
  const opened = await embeddedChecks(config, checks);
  return opened && { store: clientStore(opened), close: () => opened.close() };
}

/** The servers on this database, from their heartbeat rows. */
async function serverCheck(store: MetaStore, checks: Check[]) {
  const running = await runningInstances(store);
  checks.push({ name: "server", status: "ok", message: running.length ? running.map((s) => `running: pid ${s.pid} on ${s.host}, port ${s.port}`).join("; ") : "no server is running on this database" });
}

const ROLLBACK = Symbol("rollback");

/**
 * PostgreSQL (issue 18): reachable, writable (a row written to meta and rolled back: no change, but the privilege and
 * a read-write server are proven), the schema applied by this binary's migrations (drizzle-pg/); no files to size.
 */
async function pgChecks(config: Config, checks: Check[]): Promise<Opened | null> {
  const where = `PostgreSQL at ${displayUrl(config.databaseUrl)}`;
  // the PostgreSQL store is loaded only here (every other command starts sooner without it); the driver is Bun's
  const [{ pgStore }, { explainPgFailure }] = await Promise.all([import("../db/pg/store"), import("../db/pg/open")]);
  const client = new SQL(config.databaseUrl, { max: 1, connectionTimeout: 5, connection: { application_name: "waitlist doctor" } });
  const close = () => client.close({ timeout: 1 }).catch(() => {});
  try {
    await client`SELECT 1`;
  } catch (err) {
    await close();
    // what to do, as serve says it (no TLS where the URL asks for it, a refused login, no such database); a server
    // that does not answer is said as before
    const explained = explainPgFailure(err, config.databaseUrl);
    const specific = explained instanceof DatabaseOpenError && !explained.message.startsWith("cannot reach");
    checks.push({ name: "database", status: "fail", message: specific ? explained.message : `cannot reach ${where}: ${firstLine(err)}` });
    return null;
  }
  const [{ num, version }] = await client<{ num: string; version: string }[]>`SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version`;
  checks.push(
    Number(num) >= OLDEST_PG * 10_000
      ? { name: "postgres", status: "ok", message: `PostgreSQL ${version.split(" ")[0]} (${OLDEST_PG} or newer is supported)` }
      : { name: "postgres", status: "warn", message: `PostgreSQL ${version.split(" ")[0]} is older than ${OLDEST_PG}, the oldest version supported: upgrade the server` },
  );
  const [found] = await client<{ t: string | null }[]>`SELECT to_regclass('schema_migrations')::text AS t, to_regclass('meta')::text AS m`;
  if (!found?.t) {
    // serve creates the schema at its first start, if this user may (PostgreSQL 15+ lets only the owner of the
    // database create in schema public): say what to grant, as serve's start-up error does
    const [{ may, db, me }] = await client<{ may: boolean; db: string; me: string }[]>`SELECT has_schema_privilege('public', 'CREATE') AS may, current_database() AS db, current_user AS me`;
    await close();
    checks.push({
      name: "database",
      status: "fail",
      message: may
        ? `${where} holds no waitlist schema (serve creates it at its first start)`
        : `${where} holds no waitlist schema, and user ${me} may not create it: make the user own the database (ALTER DATABASE ${db} OWNER TO ${me}) or GRANT CREATE ON SCHEMA public TO ${me}`,
    });
    return null;
  }
  try {
    await client.begin(async (tx) => {
      await tx`INSERT INTO meta (key, value) VALUES ('doctor:probe', '') ON CONFLICT (key) DO NOTHING`;
      throw ROLLBACK;
    });
  } catch (err) {
    if (err !== ROLLBACK) {
      await close();
      checks.push({ name: "database", status: "fail", message: `cannot write ${where}: ${firstLine(err)}` });
      return null;
    }
  }
  checks.push({ name: "database", status: "ok", message: `${where} answers and is writable` });
  const known = new Set(pgMigrations.map((m) => m.tag));
  const tags = (await client<{ tag: string }[]>`SELECT tag FROM schema_migrations`).map((r) => r.tag);
  const applied = tags.filter((t) => known.has(t)).length;
  const unknown = tags.length - applied;
  const current = pgMigrations.length;
  if (unknown > 0) checks.push({ name: "schema", status: "fail", message: `PostgreSQL schema has ${unknown} migration(s) this binary does not know (newer than its ${current}): upgrade the binary` });
  else if (applied === current) checks.push({ name: "schema", status: "ok", message: `PostgreSQL schema ${applied} is current` });
  else checks.push({ name: "schema", status: "warn", message: `PostgreSQL schema ${applied} is older than this binary's ${current}: the next start migrates it` });
  const store = pgStore(client);
  await serverCheck(store, checks);
  return { store, close };
}

async function embeddedChecks(config: Config, checks: Check[]): Promise<Client | null> {
  const path = databasePath(config.databaseUrl);
  if (path && !existsSync(path)) {
    checks.push({ name: "database", status: "fail", message: `${resolve(path)} does not exist (serve creates it at its first start)` });
    return null;
  }
  const client = createClient({ url: config.databaseUrl, timeout: 2_000 });
  try {
    if (path) accessSync(dirname(path), constants.W_OK);
    // taking the write lock and letting go proves the file is writable without changing it
    const tx = await client.transaction("write");
    await tx.rollback();
    checks.push({ name: "database", status: "ok", message: `${path ? resolve(path) : "the libSQL server"} opens and is writable` });
  } catch (err) {
    client.close();
    checks.push({ name: "database", status: "fail", message: `cannot write ${path ?? "the database server"}: ${String((err as Error).message).split("\n")[0]}` });
    return null;
  }
  const version = await schemaVersionOf(client);
  if (version === SCHEMA_VERSION) checks.push({ name: "schema", status: "ok", message: `schema ${version} is current` });
  else if (version < SCHEMA_VERSION) checks.push({ name: "schema", status: "warn", message: `schema ${version} is older than this binary's ${SCHEMA_VERSION}: the next start migrates it` });
  else checks.push({ name: "schema", status: "fail", message: `schema ${version} is newer than this binary's ${SCHEMA_VERSION}: upgrade the binary` });
  const sizes = databaseFileSizes(config);
  if (sizes) checks.push({ name: "files", status: "ok", message: `database ${formatBytes(sizes.fileBytes)}, WAL ${formatBytes(sizes.walBytes)}` });
  await serverCheck(clientStore(client), checks);
  return client;
}

function diskCheck(config: Config): Check | null {
  const path = databasePath(config.databaseUrl);
  if (!path || !existsSync(dirname(path))) return null;
  const fs = statfsSync(dirname(path));
  const free = fs.bavail * fs.bsize;
  const share = fs.blocks ? free / (fs.blocks * fs.bsize) : 1;
  const message = `${formatBytes(free)} free (${Math.round(share * 100)}%) where the database lives`;
  return { name: "disk", status: free < LOW_DISK ? "fail" : free < TIGHT_DISK || share < 0.1 ? "warn" : "ok", message };
}

async function mailChecks(config: Config, checks: Check[]): Promise<void> {
  const base = new URL(config.baseUrl);
  if (config.smtpUrl && isLocalHost(base.hostname)) checks.push({ name: "base_url", status: "warn", message: `BASE_URL is ${config.baseUrl}: links in emails will point at localhost` });
  else checks.push({ name: "base_url", status: "ok", message: `BASE_URL is ${config.baseUrl}` });
  const domain = /@([^>\s]+)>?\s*$/.exec(config.mailFrom)?.[1]?.toLowerCase() ?? "";
  if (!domain || isLocalHost(domain)) {
    checks.push({ name: "mail_from", status: config.smtpUrl ? "fail" : "warn", message: `MAIL_FROM is "${config.mailFrom}": receivers reject mail from ${domain || "no domain"}; set MAIL_FROM or BASE_URL` });
  } else checks.push({ name: "mail_from", status: "ok", message: `mail comes from ${domain}` });
  if (!config.smtpUrl) {
    checks.push({ name: "smtp", status: "warn", message: "SMTP_URL is unset: emails are written to the log and kept in the outbox" });
    return;
  }
  const url = new URL(config.smtpUrl);
  const where = `${url.hostname}:${url.port || (url.protocol === "smtps:" ? 465 : 587)}`;
  const { default: nodemailer } = await import("nodemailer");
  const transport = nodemailer.createTransport(config.smtpUrl, { connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS } as any);
  try {
    await transport.verify();
    checks.push({ name: "smtp", status: "ok", message: `${where} answers EHLO${url.username ? " and accepts the login" : ""}` });
  } catch (err) {
    checks.push({ name: "smtp", status: "fail", message: `${where}: ${String((err as Error).message).split("\n")[0]}` });
  } finally {
    transport.close();
  }
}

async function proxyCheck(config: Config, store: MetaStore | null): Promise<Check> {
  const seen = store ? await readTraffic(store) : { forwardedAt: null, directAt: null };
  const recent = (at: number | null) => at !== null && Date.now() - at < RECENT_MS;
  if (recent(seen.forwardedAt) && !config.trustProxy) {
    return { name: "trust_proxy", status: "fail", message: `requests arrive through a local proxy (X-Forwarded-For, ${ago(Date.now() - seen.forwardedAt!)} ago) but TRUST_PROXY is off: every visitor shares the proxy's IP` };
  }
  if (config.trustProxy && recent(seen.directAt) && !recent(seen.forwardedAt)) {
    return { name: "trust_proxy", status: "warn", message: "TRUST_PROXY is on but requests arrive directly: clients can forge X-Forwarded-For" };
  }
  if (!recent(seen.forwardedAt) && !recent(seen.directAt)) return { name: "trust_proxy", status: "ok", message: `TRUST_PROXY is ${config.trustProxy ? "on" : "off"}; no outside requests recorded yet to compare` };
  return { name: "trust_proxy", status: "ok", message: `TRUST_PROXY is ${config.trustProxy ? "on and requests arrive through a proxy" : "off and requests arrive directly"}` };
}

function backupCheck(config: Config): Check | null {
  if (!config.backupDir) return null;
  const dir = resolve(config.backupDir);
  let newest = 0;
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith(".db")) continue;
      newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
    }
  } catch (err) {
    return { name: "backups", status: "fail", message: `BACKUP_DIR ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  if (!newest) return { name: "backups", status: "fail", message: `no backup (*.db) in ${dir} yet: run waitlist backup` };
  const age = Date.now() - newest;
  return { name: "backups", status: age > 2 * DAY ? "fail" : age > 26 * 3_600_000 ? "warn" : "ok", message: `newest backup in ${dir} is ${ago(age)} old` };
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "check the configuration a production instance needs (exit 1 on any failed check)",
  flags: [],
  required: [],
  async run({ flags, env }) {
    const config = loadConfig(env, flags);
    const checks: Check[] = [];
    const opened = await databaseChecks(config, checks);
    try {
      const disk = diskCheck(config);
      if (disk) checks.push(disk);
      await mailChecks(config, checks);
      checks.push(await proxyCheck(config, opened?.store ?? null));
      // BACKUP_DIR holds `waitlist backup` files, which only the embedded database has (PostgreSQL: pg_dump's schedule)
      const backups = isPgUrl(config.databaseUrl) ? null : backupCheck(config);
      if (backups) checks.push(backups);
    } finally {
      await opened?.close();
    }
    const ok = !checks.some((c) => c.status === "fail");
    const width = Math.max(...checks.map((c) => c.name.length)) + 2;
    return {
      json: { ok, checks },
      text: checks.map((c) => `${c.status.padEnd(5)} ${c.name.padEnd(width)}${c.message}`).join("\n"),
      exitCode: ok ? 0 : 1,
    };
  },
};
