// Prometheus metrics (issue 17): GET /metrics behind METRICS_TOKEN (off: 404). Labels are route templates,
// methods, statuses, outbox kinds and job names: never a raw path, a key or an email.
import { createHash, timingSafeEqual } from "node:crypto";
import { statSync } from "node:fs";
import { Elysia } from "elysia";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Client } from "@libsql/client";
import { now } from "../clock";
import type { Db } from "../db/client";
import { AppError } from "./errors";

export const registry = new Registry();

// Always registered: the services update these few counters whether or not anyone scrapes them (a
// counter's inc is a property write), so no service needs to know the configuration.
export const signUps = new Counter({ name: "waitlist_signups_total", help: "New sign-ups (repeats of a registered email are not counted)", labelNames: ["via"], registers: [registry] });
export const deliveryFailures = new Counter({
  name: "waitlist_outbox_delivery_failures_total",
  help: "Failed delivery attempts of outbox rows (each is retried on the DESIGN §4 schedule until it gives up)",
  labelNames: ["kind"],
  registers: [registry],
});
export const jobRuns = new Counter({ name: "waitlist_job_runs_total", help: "Cron job runs on this instance (a run happens only with the job's lease)", labelNames: ["job", "outcome"], registers: [registry] });

const requests = new Counter({ name: "waitlist_http_requests_total", help: "HTTP requests by method, route template and status", labelNames: ["method", "route", "status"], registers: [registry] });
const latency = new Histogram({
  name: "waitlist_http_request_duration_seconds",
  help: "Time from a request's arrival to its response being sent, by method and route template",
  labelNames: ["method", "route"],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const databaseTime = new Histogram({
  name: "waitlist_database_query_duration_seconds",
  help: "Time in database calls: single statements, batches, and write transactions from begin to close",
  labelNames: ["op"],
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  registers: [registry],
});

/** Route label of a request no route matched (404, 405): a raw path would make one series per scanner probe. */
export const UNMATCHED = "unmatched";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const SIGN_UP_ROUTE = "/api/v1/waitlist/:waitlistKey/sign-up";
const KINDS = ["email", "webhook"] as const;

/** The observer the request log calls once per response; label children are cached, so a request costs two map lookups. */
export type RequestObserver = (method: string, route: string | undefined, status: number, seconds: number, response: unknown) => void;

function requestObserver(): RequestObserver {
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return (rawMethod, rawRoute, status, seconds, response) => {
    const method = METHODS.has(rawMethod) ? rawMethod : "OTHER";
    const route = rawRoute || UNMATCHED;
    const key = `${method} ${route} ${status}`;
    let child = children.get(key);
    if (!child) {
      child = { count: requests.labels(method, route, String(status)), time: latency.labels(method, route) };
      children.set(key, child);
    }
    child.count.inc();
    child.time.observe(seconds);
    // the API's sign-up answers say whether the email was new (form sign-ups are counted by formSignUpCounter)
    if (route === SIGN_UP_ROUTE && status === 200 && (response as { is_new_sign_up?: boolean } | null)?.is_new_sign_up === true) apiSignUps.inc();
  };
}
const apiSignUps = signUps.labels("api");

/** Wraps the public form's dispatch: the form hands it only to signUp, which calls it exactly once per new sign-up. */
export function formSignUpCounter<T extends (ids: string[]) => void>(dispatch: T): T {
  const form = signUps.labels("form");
  return ((ids: string[]) => {
    form.inc();
    dispatch(ids);
  }) as T;
}

const INSTRUMENTED = Symbol("metrics.instrumented");

/** Times the client's calls (drizzle and the group writer both go through these methods). */
function instrumentDatabase(client: Client): void {
  const c = client as Client & { [INSTRUMENTED]?: true };
  if (c[INSTRUMENTED]) return;
  c[INSTRUMENTED] = true;
  const single = databaseTime.labels("execute");
  const batched = databaseTime.labels("batch");
  const tx = databaseTime.labels("transaction");
  const execute = client.execute.bind(client);
  const batch = client.batch.bind(client);
  const transaction = client.transaction.bind(client);
  const timed = <R>(child: { observe(v: number): void }, run: () => Promise<R>): Promise<R> => {
    const at = performance.now();
    return run().finally(() => child.observe((performance.now() - at) / 1000));
  };
  client.execute = ((...args: Parameters<Client["execute"]>) => timed(single, () => (execute as any)(...args))) as Client["execute"];
  client.batch = ((...args: Parameters<Client["batch"]>) => timed(batched, () => (batch as any)(...args))) as Client["batch"];
  client.transaction = (async (...args: Parameters<Client["transaction"]>) => {
    const at = performance.now();
    const t = await transaction(...args);
    const close = t.close.bind(t);
    t.close = () => {
      close();
      tx.observe((performance.now() - at) / 1000);
    };
    return t;
  }) as Client["transaction"];
}

/** The embedded database's file path, or null for a libSQL server. */
function filePath(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith("file:")) return null;
  const path = databaseUrl.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "").replace(/\?.*$/, "");
  return path && path !== ":memory:" ? path : null;
}

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL yet (or just checkpointed away)
  }
};

/** Gauges read when scraped: the outbox in one indexed query (status = 'pending'), the file sizes by stat. */
function scrapeGauges(db: Db, databaseUrl: string): void {
  const path = filePath(databaseUrl);
  // collect() runs in registration order: the depth gauge's reads the outbox for both outbox gauges
  const oldestByKind = new Map<string, number>();
  new Gauge({
    name: "waitlist_outbox_pending",
    help: "Outbox rows waiting for delivery (including retries and emails held while SMTP_URL is unset)",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      const at = now();
      const rows = (await db.$client.execute("SELECT kind, count(*) AS n, min(created_at) AS first FROM outbox WHERE status = 'pending' GROUP BY kind")).rows;
      for (const kind of KINDS) {
        const row = rows.find((r) => r.kind === kind);
        this.set({ kind }, row ? Number(row.n) : 0);
        oldestByKind.set(kind, row ? Math.max(0, (at - Number(row.first)) / 1000) : 0);
      }
    },
  });
  new Gauge({
    name: "waitlist_outbox_oldest_pending_age_seconds",
    help: "Age of the oldest pending outbox row (0 when none)",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const kind of KINDS) this.set({ kind }, oldestByKind.get(kind) ?? 0);
    },
  });
  if (path) {
    new Gauge({
      name: "waitlist_database_bytes",
      help: "Size of the embedded database's file and of its write-ahead log",
      labelNames: ["file"],
      registers: [registry],
      collect() {
        this.set({ file: "db" }, sizeOf(path));
        this.set({ file: "wal" }, sizeOf(`${path}-wal`));
      },
    });
  }
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Constant-time: both sides are hashed to the same length first, so neither the length nor a prefix leaks. */
const isBearer = (header: string | null, expected: Buffer) => header !== null && timingSafeEqual(digest(header), expected);

export interface Metrics {
  observe: RequestObserver;
  routes: Elysia<any, any, any, any, any, any, any>;
}

/** Null when METRICS_TOKEN is unset: no route (GET /metrics is a 404), no per-request cost. */
export function createMetrics(deps: { db: Db; token: string | null; databaseUrl: string }): Metrics | null {
  if (!deps.token) return null;
  const expected = digest(`Bearer ${deps.token}`);
  instrumentDatabase(deps.db.$client);
  // a second app in the same process (tests) replaces the first one's scrape-time gauges
  for (const name of ["waitlist_outbox_pending", "waitlist_outbox_oldest_pending_age_seconds", "waitlist_database_bytes"]) registry.removeSingleMetric(name);
  scrapeGauges(deps.db, deps.databaseUrl);
  const routes = new Elysia({ name: "http/metrics" }).get(
    "/metrics",
    async ({ request, set }) => {
      if (!isBearer(request.headers.get("authorization"), expected)) {
        set.headers["www-authenticate"] = 'Bearer realm="metrics"';
        throw new AppError("unauthorized", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>");
      }
      return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType, "cache-control": "no-store" } });
    },
    { detail: { hide: true } },
  );
  return { observe: requestObserver(), routes };
}
