// GET /metrics (issue 17 item 5): off without METRICS_TOKEN, Bearer-protected with it, Prometheus text with
// route templates (never a raw path, key or email), sign-ups, outbox depth and age, jobs, database time and size.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engine, startServer, until, type TestServer } from "./support/server";
import { startReceiver, type Receiver } from "./support/peers";

const TOKEN = "scrape-token-0123456789";
let off: TestServer;
let on: TestServer;
let hooks: Receiver;
beforeAll(async () => {
  hooks = startReceiver();
  [off, on] = await Promise.all([startServer({ env: { RATE_LIMITS: "off" } }), startServer({ env: { RATE_LIMITS: "off", METRICS_TOKEN: TOKEN } })]);
});
afterAll(async () => {
  await Promise.all([off?.stop(), on?.stop()]);
  hooks?.stop();
});

const scrape = (server: TestServer, authorization?: string) => fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
const text = async () => {
  const r = await scrape(on, `Bearer ${TOKEN}`);
  expect(r.status).toBe(200);
  return r.text();
};
/** The value of one sample line, e.g. `waitlist_signups_total{via="api"}`; 0 when absent. */
const sample = (body: string, series: string): number => {
  const line = body.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe("access", () => {
  test("without METRICS_TOKEN, /metrics is a 404 even with a bearer token", async () => {
    expect((await scrape(off)).status).toBe(404);
    expect((await scrape(off, `Bearer ${TOKEN}`)).status).toBe(404);
  });

  test("with METRICS_TOKEN, no token, a wrong one, a prefix of it or another scheme is 401", async () => {
    for (const auth of [undefined, "Bearer wrong", `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN]) {
      const r = await scrape(on, auth);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(((await r.json()) as any).statusCode).toBe(401);
    }
  });

  test("the right token gets the Prometheus text format with every metric family", async () => {
    // a database read to time (PostgreSQL times the services' Store calls, which this server may not have made yet)
    expect((await fetch(`${on.url}/healthz`)).status).toBe(200);
    const r = await scrape(on, `Bearer ${TOKEN}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const body = await r.text();
    for (const name of [
      "waitlist_http_requests_total",
      "waitlist_http_request_duration_seconds",
      "waitlist_signups_total",
      "waitlist_outbox_pending",
      "waitlist_outbox_oldest_pending_age_seconds",
      "waitlist_outbox_delivery_failures_total",
      "waitlist_job_runs_total",
      "waitlist_database_query_duration_seconds",
      // the embedded database's file and WAL; PostgreSQL's pg_database_size (issue 43)
      "waitlist_database_bytes",
    ]) {
      expect(body).toContain(`# TYPE ${name} `);
    }
    expect(sample(body, 'waitlist_database_bytes{file="db"}')).toBeGreaterThan(0);
    expect(sample(body, 'waitlist_database_query_duration_seconds_count{op="execute"}')).toBeGreaterThan(0);
  });
});

describe("what is counted", () => {
  test("a sign-up's write is timed as a batch on either engine: one more observation, its time inside the histogram's sum", async () => {
    const { key } = await on.account();
    const w = (await on.request("POST", "/api/v1/waitlists", { key, body: { name: "Timed writes" } })).body.data.waitlist;
    const before = await text();
    const count = sample(before, 'waitlist_database_query_duration_seconds_count{op="batch"}');
    const sum = sample(before, 'waitlist_database_query_duration_seconds_sum{op="batch"}');
    expect((await on.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "timed-write@example.com" } })).status).toBe(200);
    const after = await text();
    // the sign-up's one write, and whatever else wrote meanwhile (the jobs, the creation's after-response work)
    expect(sample(after, 'waitlist_database_query_duration_seconds_count{op="batch"}')).toBeGreaterThanOrEqual(count + 1);
    expect(sample(after, 'waitlist_database_query_duration_seconds_sum{op="batch"}')).toBeGreaterThan(sum);
    // every observation falls in the +Inf bucket, which equals the count
    expect(sample(after, 'waitlist_database_query_duration_seconds_bucket{op="batch",le="+Inf"}')).toBe(sample(after, 'waitlist_database_query_duration_seconds_count{op="batch"}'));
  });

  test("a new sign-up (API or form) increments waitlist_signups_total; a repeat does not; no key or email in the output", async () => {
    const { key } = await on.account();
    const w = (await on.request("POST", "/api/v1/waitlists", { key, body: { name: "Metrics launch" } })).body.data.waitlist;
    const email = "metrics-secret-person@example.com";
    const before = await text();
    const api = sample(before, 'waitlist_signups_total{via="api"}');
    const form = sample(before, 'waitlist_signups_total{via="form"}');

    expect((await on.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email } })).status).toBe(200);
    expect((await on.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email } })).body.is_new_sign_up).toBe(false);
    const posted = await fetch(`${on.url}/s/${w.key}`, {
      method: "POST",
      body: new URLSearchParams({ email: "metrics-form-person@example.com" }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: on.url.replace("127.0.0.1", "localhost") },
      redirect: "manual",
    });
    expect(posted.status).toBe(303);
    await on.request("GET", `/api/v1/waitlist/${w.key}/subscribers/${encodeURIComponent(email)}`, { key });

    // the response hook runs after the answer is sent: poll
    const after = await until(async () => {
      const t = await text();
      return sample(t, 'waitlist_signups_total{via="form"}') === form + 1 ? t : null;
    }, 5_000, "the form sign-up to be counted");
    expect(sample(after, 'waitlist_signups_total{via="api"}')).toBe(api + 1);
    expect(sample(after, 'waitlist_http_requests_total{method="POST",route="/api/v1/waitlist/:waitlistKey/sign-up",status="200"}')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'waitlist_http_requests_total{method="POST",route="/s/:waitlistKey",status="303"}')).toBeGreaterThanOrEqual(1);
    expect(after).toContain('route="/api/v1/waitlist/:waitlistKey/subscribers/:idOrEmail"');
    for (const secret of [key, w.key, w.id, email, "metrics-secret-person", "metrics-form-person", TOKEN]) expect(after).not.toContain(secret);
  });

  test("unknown paths and odd methods are labelled unmatched and OTHER, never by the raw path", async () => {
    await fetch(`${on.url}/no/such/path/probe-1234`);
    await fetch(`${on.url}/healthz`, { method: "PROPFIND" });
    const body = await until(async () => {
      const t = await text();
      return t.includes('method="OTHER"') ? t : null;
    }, 5_000, "the odd method to be counted");
    expect(sample(body, 'waitlist_http_requests_total{method="GET",route="unmatched",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(body).not.toContain("probe-1234");
    expect(body).not.toContain("PROPFIND");
  });

  test("the outbox depth and oldest age per kind are read from the database; a failed webhook delivery is counted", async () => {
    hooks.respondWith(500, 500, 500);
    const { key } = await on.account();
    const w = (await on.request("POST", "/api/v1/waitlists", { key, body: { name: "Metrics hooks" } })).body.data.waitlist;
    expect((await on.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true } } })).status).toBe(200);
    const failuresBefore = sample(await text(), 'waitlist_outbox_delivery_failures_total{kind="webhook"}');
    expect((await on.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "hooked@example.com" } })).status).toBe(200);
    // the first attempt fails (500): the row stays pending, due again in about 30 s
    const body = await until(async () => {
      const t = await text();
      return sample(t, 'waitlist_outbox_delivery_failures_total{kind="webhook"}') === failuresBefore + 1 ? t : null;
    }, 10_000, "the failed delivery to be counted");
    expect(sample(body, 'waitlist_outbox_pending{kind="webhook"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'waitlist_outbox_oldest_pending_age_seconds{kind="webhook"}')).toBeGreaterThan(0);
    expect(body).toContain('waitlist_outbox_pending{kind="email"}');
  });

  test("job runs are counted by job and outcome (the outbox retry job runs every 5 s)", async () => {
    const body = await until(async () => {
      const t = await text();
      return sample(t, 'waitlist_job_runs_total{job="outbox-retry",outcome="ok"}') >= 1 ? t : null;
    }, 12_000, "an outbox-retry run");
    expect(body).toContain("waitlist_job_runs_total");
  }, 20_000);
});
