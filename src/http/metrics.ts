// Prometheus metrics (issue 17): GET /metrics behind METRICS_TOKEN (off: 404). Labels are route templates,
// methods, statuses, outbox kinds and job names: never a raw path, a key or an email.
import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type * as Prom from "prom-client";
import { sql } from "drizzle-orm";
import { now } from "../clock";
import type { Db } from "../db/db";
import { AppError } from "./errors";

// prom-client's three classes, each from its own file: its index also loads the Pushgateway (node:http), the default
// metrics and the cluster aggregator, a tenth of the server's start-up, none of which is used here
const Registry: typeof Prom.Registry = require("prom-client/lib/registry");
const Counter: typeof Prom.Counter = require("prom-client/lib/counter");
const Gauge: typeof Prom.Gauge = require("prom-client/lib/gauge");

export const registry = new Registry();

// Always registered: the services update these few counters whether or not anyone scrapes them (a
// counter's inc is a property write), so no service needs to know the configuration.
export const signUps = new Counter({ name: "waitlist_signups_total", help: "New sign-ups (repeats of a registered email are not counted)", labelNames: ["via"], registers: [registry] });
export const deliveryFailures = new Counter({
  name: "waitlist_outbox_delivery_failures_total",
  help: "Failed delivery attempts of outbox rows (each is retried with backoff, about 30 s to 24 h, until it gives up)",
  labelNames: ["kind"],
  registers: [registry],
});
export const jobRuns = new Counter({ name: "waitlist_job_runs_total", help: "Cron job runs on this instance (a run happens only with the job's lease)", labelNames: ["job", "outcome"], registers: [registry] });

/**
 * Per-request and per-query series are kept as plain numbers (FastHistogram, FastCounter): the hot path is
 * one map lookup and a few additions, where prom-client's own hash the labels on every call (about 5 µs of
 * CPU a /healthz request, measured with autocannon). The registry formats them when scraped.
 */
class Series {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Record<string, string>,
    bounds: number,
  ) {
    this.counts = new Float64Array(bounds);
  }
}

class FastHistogram {
  readonly type = "histogram";
  private readonly series = new Map<string, Series>();
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: number[],
  ) {
    registry.registerMetric(this as never);
  }
  /** The series of one label set, made once. */
  of(key: string, labels: Record<string, string>): Series {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = new Series(labels, this.buckets.length)));
    return s;
  }
  observe(s: Series, value: number): void {
    s.sum += value;
    s.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (value <= b[i]) {
        s.counts[i]++;
        return;
      }
    }
  }
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => values.push({ labels: { ...s.labels, le }, value: (cumulative += s.counts[i]), metricName: `${this.name}_bucket` }));
      values.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" };
  }
}

/** Counts kept as plain numbers per label set, like FastHistogram. */
class FastCounter {
  readonly type = "counter";
  private readonly series = new Map<string, { labels: Record<string, string>; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {
    registry.registerMetric(this as never);
  }
  of(key: string, labels: Record<string, string>) {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, value: 0 }));
    return s;
  }
  get() {
    return { name: this.name, help: this.help, type: this.type, values: [...this.series.values()], aggregator: "sum" };
  }
}

const requests = new FastCounter("waitlist_http_requests_total", "HTTP requests by method, route template and status");
const latency = new FastHistogram(
  "waitlist_http_request_duration_seconds",
  "Time from a request's arrival to its response being sent, by method and route template",
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);
const databaseTime = new FastHistogram(
  "waitlist_database_query_duration_seconds",
  "Time in database calls: single statements, batches, and write transactions from begin to close",
  [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
);

/** Route label of a request no route matched (404, 405): a raw path would make one series per scanner probe. */
export const UNMATCHED = "unmatched";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const SIGN_UP_ROUTE = "/api/v1/waitlist/:waitlistKey/sign-up";
const KINDS = ["email", "webhook"] as const;

/** The observer the request log calls once per response. */
export type RequestObserver = (method: string, route: string | undefined, status: number, seconds: number, response: unknown) => void;

function requestObserver(): RequestObserver {
  const children = new Map<string, { count: { value: number }; time: Series }>();
  const apiSignUps = signUps.labels("api");
    return (rawMethod, rawRoute, status, seconds, response) => {
    const method = METHODS.has(rawMethod) ? rawMethod : "OTHER";
    const route = rawRoute || UNMATCHED;
    const key = `${method} ${route} ${status}`;
    let child = children.get(key);
    if (!child) {
      child = { count: requests.of(key, { method, route, status: String(status) }), time: latency.of(`${method} ${route}`, { method, route }) };
      children.set(key, child);
    }
    child.count.value++;
    latency.observe(child.time, seconds);
    // the API's sign-up answers say whether the email was new (form sign-ups are counted by formSignUpCounter)
    if (route === SIGN_UP_ROUTE && status === 200 && (response as { is_new_sign_up?: boolean } | null)?.is_new_sign_up === true) apiSignUps.inc();
  };
}

/** Wraps the public form's dispatch: the form hands it only to signUp, which calls it exactly once per new sign-up. */
export function formSignUpCounter<T extends (ids: string[]) => void>(dispatch: T): T {
  const form = signUps.labels("form");
  return ((ids: string[]) => {
    form.inc();
    dispatch(ids);
  }) as T;
}

/** The database's own timing hook (db/timing.ts) feeds the histogram, once per Db. */
const instrumented = new WeakSet<Db>();
function instrumentDatabase(db: Db): void {
  if (instrumented.has(db)) return;
  instrumented.add(db);
  const series = {
    execute: databaseTime.of("execute", { op: "execute" }),
    batch: databaseTime.of("batch", { op: "batch" }),
    transaction: databaseTime.of("transaction", { op: "transaction" }),
  };
  db.onTiming((op, seconds) => databaseTime.observe(series[op], seconds));
}

/** Gauges read when scraped: the outbox in one indexed query (status = 'pending'), the database's size. */
function scrapeGauges(db: Db): void {
  // the registry collects every metric at once: both outbox gauges share one read of the outbox
  let reading: Promise<Map<string, { n: number; age: number }>> | null = null;
  const readOutbox = () =>
    (reading ??= (async () => {
      const at = now();
      const rows = await db.rows<{ kind: string; n: number; first: number }>(
        sql`SELECT kind, count(*) AS n, min(created_at) AS first FROM outbox WHERE status = 'pending' GROUP BY kind`,
      );
      return new Map(rows.map((r) => [String(r.kind), { n: Number(r.n), age: Math.max(0, (at - Number(r.first)) / 1000) }]));
    })().finally(() => (reading = null)));
  new Gauge({
    name: "waitlist_outbox_pending",
    help: "Outbox rows waiting for delivery (including retries and emails held while SMTP_URL is unset)",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      const byKind = await readOutbox();
      for (const kind of KINDS) this.set({ kind }, byKind.get(kind)?.n ?? 0);
    },
  });
  new Gauge({
    name: "waitlist_outbox_oldest_pending_age_seconds",
    help: "Age of the oldest pending outbox row (0 when none)",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      const byKind = await readOutbox();
      for (const kind of KINDS) this.set({ kind }, byKind.get(kind)?.age ?? 0);
    },
  });
  new Gauge({
    name: "waitlist_database_bytes",
    help: "Size of the database: the embedded file (db) and its write-ahead log (wal); on PostgreSQL, the database's own size (db)",
    labelNames: ["file"],
    registers: [registry],
    async collect() {
      const size = await db.size().catch(() => null);
      if (!size) return;
      this.set({ file: "db" }, size.bytes);
      if (size.walBytes !== null) this.set({ file: "wal" }, size.walBytes);
    },
  });
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Constant-time: both sides are hashed to the same length first, so neither the length nor a prefix leaks. */
const isBearer = (header: string | null, expected: Buffer) => header !== null && timingSafeEqual(digest(header), expected);

export interface Metrics {
  observe: RequestObserver;
  routes: Elysia<any, any, any, any, any, any, any>;
}

/** Null when METRICS_TOKEN is unset: no route (GET /metrics is a 404), no per-request cost. */
export function createMetrics(deps: { db: Db; token: string | null }): Metrics | null {
  if (!deps.token) return null;
  const expected = digest(`Bearer ${deps.token}`);
  instrumentDatabase(deps.db);
  // a second app in the same process (tests) replaces the first one's scrape-time gauges
  for (const name of ["waitlist_outbox_pending", "waitlist_outbox_oldest_pending_age_seconds", "waitlist_database_bytes"]) registry.removeSingleMetric(name);
  scrapeGauges(deps.db);
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
