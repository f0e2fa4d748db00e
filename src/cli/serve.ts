// `waitlist serve`: open the database, start the HTTP server and the jobs; SIGTERM drains, checkpoints (embedded) and closes
// within STOP_BUDGET_MS (DESIGN §8, issue 17). A start-up failure is one line, exit 2, and leaves nothing created.
import { loadConfig, mailDomain } from "../config";
import { displayUrl, openDatabase, removeCreatedFiles, type Db } from "../db/open";
import { createLogger } from "../log";
import { buildApp } from "../app";
import { JOBS, startJobs } from "../jobs";
import { createDispatcher } from "../outbox/dispatcher";
import { releaseHeldEmails } from "../outbox/store";
import { keepMemoryNear } from "../memory";
import { backgroundWork } from "../background";
import { CommandError } from "./command";
import { announceInstance } from "./presence";

/** systemd's TimeoutStopSec is 20 s: the whole stop path (HTTP drain, jobs, outbox drain, checkpoint) ends well before. */
export const STOP_BUDGET_MS = 15_000;
const HTTP_DRAIN_MS = 8_000;
const JOBS_STOP_MS = 2_000;
/** Kept back at the end of the budget for the checkpoint and the close. */
const CLOSE_RESERVE_MS = 1_500;
import { IMPORT_MAX_BYTES } from "../http/body-limit";
const MEMORY_BUDGET = 120 * 1024 * 1024;
// the 1 MB limit is answered in JSON by the app (http/request-log.ts, body-limit.ts, as bodies are read); Bun's own
// applies to every body, so it is the one body the app lets past 1 MB: an import's CSV (issue 47, up to 1 GB)
const SOCKET_BODY_LIMIT = IMPORT_MAX_BYTES + 1024 * 1024;
/** A connection that sends nothing for this long (headers or body trickled, or left idle) is closed. */
export const IDLE_TIMEOUT_S = 10;

function listenFailure(err: unknown, host: string, port: number): CommandError | unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE") return new CommandError("port_in_use", `port ${port} on ${host} is already in use (is another waitlist running?): set PORT or stop the other process`);
  if (code === "EACCES") return new CommandError("port_forbidden", `port ${port} on ${host} needs privileges this process lacks: use a port above 1023`);
  if (code === "ENOTFOUND" || code === "EINVAL" || code === "EADDRNOTAVAIL" || code === "EAI_AGAIN") {
    return new CommandError("invalid_host", `HOST "${host}" is not an address of this machine (${code}): use 0.0.0.0, 127.0.0.1 or one of its addresses`);
  }
  return err;
}

export async function serve(flags: Map<string, string>, env: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(env, flags);
  const log = createLogger(config.logLevel);
  const db: Db = await openDatabase({ url: config.databaseUrl, poolSize: config.databasePoolSize, sync: config.databaseSync, warn: log.warn });
  const dispatcher = createDispatcher({ db, config, log });
  const app = buildApp({ config, db, log, dispatcher });
  let presence: ReturnType<typeof announceInstance> | undefined;
  // doctor compares TRUST_PROXY with how requests arrive (cli/presence.ts); a header lookup and a clock read per request
  app.onRequest(({ request, server }) => presence?.observe(request.headers.has("x-forwarded-for"), () => server?.requestIP(request)?.address));
  try {
    // reusePort off: a second server on a used port must fail, not split the traffic (issue 17)
    app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: SOCKET_BODY_LIMIT, idleTimeout: IDLE_TIMEOUT_S, reusePort: false });
  } catch (err) {
    dispatcher.close();
    await db.close();
    removeCreatedFiles(db);
    throw listenFailure(err, config.host, config.port);
  }
  const server = app.server!;
  // emails kept while SMTP_URL was unset go out once it is set
  if (config.smtpUrl) await releaseHeldEmails(db);
  // PORT=0 binds a free port; the derived BASE_URL follows it
  if (config.baseUrl === "http://localhost:0") config.baseUrl = `http://localhost:${server.port}`;
  const onPresenceError = (err: unknown) => log.warn("heartbeat failed", { error: (err as Error)?.message ?? String(err) });
  presence = announceInstance(db, { port: server.port ?? config.port }, onPresenceError);
  await presence.ready.catch(onPresenceError);
  // compaction is the embedded file's upkeep (incremental vacuum, WAL truncation); PostgreSQL runs its own autovacuum
  const embedded = db.d.name === "sqlite";
  const jobs = startJobs({ db, dispatcher, mailRatePerMinute: config.mailRatePerMinute }, log, embedded ? JOBS : JOBS.filter((j) => j.name !== "compact-database"));
  keepMemoryNear(MEMORY_BUDGET, backgroundWork, (fields) => log.debug("memory budget: full collection", fields));
  // once, before the first request: drops the code compiled for start-up (routes, schemas, migrations) and collects,
  // so the live heap that JavaScriptCore's growth multiplies under load is smaller (issue 19: a 3-6 MB lower peak).
  // Not under load: there it throws away optimized code too, and the JIT backs off (docs/decisions.md)
  Bun.shrink();
  // rows that came due while no instance ran (a restart, a crash) go out now, not at the next tick
  void dispatcher.catchUp(3_000).catch((err) => log.error("outbox catch-up failed", { error: (err as Error)?.message ?? String(err) }));
  // issue 45: mail providers refuse or spam-folder mail from a domain that is not one (after a start that worked:
  // a failed start is one line)
  const domain = mailDomain(config.mailFrom);
  if (domain === "localhost" || domain.endsWith(".localhost") || /^[\d.]+$|:/.test(domain)) {
    log.warn("MAIL_FROM is not on a real domain: set BASE_URL to the public URL or MAIL_FROM to an address of your domain, or providers will reject the emails", { mail_from: config.mailFrom });
  }
  log.info("listening", { host: config.host, port: server.port, base_url: config.baseUrl, database: embedded ? config.databaseUrl : `PostgreSQL ${displayUrl(config.databaseUrl)}` });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + STOP_BUDGET_MS;
    const left = () => Math.max(0, deadline - Date.now() - CLOSE_RESERVE_MS);
    // a safety net: whatever hangs, the process is gone before systemd's SIGKILL (the WAL keeps every commit)
    setTimeout(() => {
      log.error("stop budget exceeded", { signal, budget_ms: STOP_BUDGET_MS });
      process.exit(1);
    }, STOP_BUDGET_MS).unref();
    log.info("shutting down", { signal });
    const within = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), Bun.sleep(ms).then(() => false)]);
    const drained = await within(server.stop(false), Math.min(HTTP_DRAIN_MS, left()));
    if (!drained) await server.stop(true);
    const jobsStopped = await within(jobs.stop(), Math.min(JOBS_STOP_MS, left()));
    await within(dispatcher.drain(left()), left());
    dispatcher.close();
    await within(presence!.stop(), Math.min(500, left() + CLOSE_RESERVE_MS / 2));
    // issue 17: after a clean stop the database file alone is complete (PostgreSQL has no file of ours to fold)
    const folded = embedded
      ? await db.checkpoint().catch((err: unknown) => {
          log.warn("checkpoint failed", { error: (err as Error)?.message ?? String(err) });
          return false;
        })
      : null;
    await db.close().catch(() => {});
    log.info("stopped", { signal, drained, jobs_stopped: jobsStopped, checkpointed: folded, ms: STOP_BUDGET_MS - (deadline - Date.now()) });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
