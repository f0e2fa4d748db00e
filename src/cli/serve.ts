// `waitlist serve`: open the database, start the HTTP server and the jobs; SIGTERM drains and closes (DESIGN §8).
import { loadConfig } from "../config";
import { openDatabase } from "../db/client";
import { createLogger } from "../log";
import { buildApp } from "../app";
import { startJobs } from "../jobs";
import { createDispatcher } from "../outbox/dispatcher";
import { releaseHeldEmails } from "../outbox/store";
import { keepMemoryNear } from "../memory";

const DRAIN_MS = 10_000;
const MEMORY_BUDGET = 120 * 1024 * 1024;
// the 1 MB limit is answered in JSON by the app (http/request-log.ts); Bun's own, higher, only guards undeclared bodies
const SOCKET_BODY_LIMIT = 4 * 1024 * 1024;
/** A connection that sends nothing for this long (headers or body trickled, or left idle) is closed. */
export const IDLE_TIMEOUT_S = 10;

export async function serve(flags: Map<string, string>, env: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(env, flags);
  const log = createLogger(config.logLevel);
  const db = await openDatabase({ url: config.databaseUrl, authToken: config.databaseAuthToken, sync: config.databaseSync });
  const dispatcher = createDispatcher({ db, config, log });
  // emails kept while SMTP_URL was unset go out once it is set
  if (config.smtpUrl) await releaseHeldEmails(db);
  const app = buildApp({ config, db, log, dispatcher });
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: SOCKET_BODY_LIMIT, idleTimeout: IDLE_TIMEOUT_S });
  const server = app.server!;
  // PORT=0 binds a free port; the derived BASE_URL follows it
  if (config.baseUrl === "http://localhost:0") config.baseUrl = `http://localhost:${server.port}`;
  const jobs = startJobs({ db, dispatcher }, log);
  keepMemoryNear(MEMORY_BUDGET);
  // rows that came due while no instance ran (a restart, a crash) go out now, not at the next tick
  void dispatcher.catchUp(3_000).catch((err) => log.error("outbox catch-up failed", { error: (err as Error)?.message ?? String(err) }));
  log.info("listening", { host: config.host, port: server.port, base_url: config.baseUrl, database: config.databaseUrl.startsWith("file:") ? config.databaseUrl : "libsql server" });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    const drained = server.stop(false);
    const timedOut = await Promise.race([drained.then(() => false), Bun.sleep(DRAIN_MS).then(() => true)]);
    if (timedOut) await server.stop(true);
    await jobs.stop();
    await dispatcher.drain(DRAIN_MS);
    dispatcher.close();
    db.$client.close();
    log.info("stopped", { signal, drained: !timedOut });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
