// Limits under pressure (issue 10): a burst of parallel requests gets exactly the rate limit's worth
// through (no race), and connections that trickle or stall are cut off. Over real HTTP and raw TCP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";
import { inOneWindow } from "./support/windows";

const BASE_URL = "http://wl.limits.example";
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { BASE_URL } });
});
afterAll(() => s.stop());

const uniq = () => Math.random().toString(36).slice(2, 8);

describe("bursts", () => {
  test("30 parallel sign-ups on a free key (10 a minute): exactly 10 are answered 200 and stored, 20 get 429", async () => {
    await inOneWindow(async (track) => {
      const { key } = await s.account("free");
      const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Burst ${uniq()}` } })).body.data.waitlist;
      const path = `/api/v1/waitlist/${w.key}`;
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => s.request("POST", `${path}/sign-up`, { key, body: { email: `b${i}@example.com` } }).then(track)));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((x) => x === 200)).toHaveLength(10);
      expect(statuses.filter((x) => x === 429)).toHaveLength(20);
      // issue 16: every 429 carries Retry-After, equal to its body's retry_after; no other answer has one
      for (const r of answers) expect(r.headers.get("retry-after")).toBe(r.status === 429 ? String(r.body.data.retry_after) : null);
      // stats (another bucket) count exactly the 10
      const stats = await s.request("GET", `${path}/stats`, { key });
      expect(stats.body.data.subscribers_total).toBe(10);
    });
  });

  test("25 parallel form posts from one IP (10 a minute per waitlist): exactly 10 sign up", async () => {
    await inOneWindow(async (track) => {
      const { key } = await s.account("business");
      const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Form burst ${uniq()}` } })).body.data.waitlist;
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          s
            .request("POST", `/s/${w.key}`, {
              raw: new URLSearchParams({ email: `f${i}@example.com` }).toString(),
              headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE_URL, accept: "application/json" },
            })
            .then(track),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((x) => x === 200)).toHaveLength(10);
      expect(statuses.filter((x) => x === 429)).toHaveLength(15);
      for (const r of answers) expect(r.headers.get("retry-after")).toBe(r.status === 429 ? String(r.body.data.retry_after) : null);
      expect((await s.request("GET", `/api/v1/waitlist/${w.key}/stats`, { key })).body.data.subscribers_total).toBe(10);
    });
  });
});

describe("slow clients", () => {
  test("a connection that stops mid-headers is closed, and a body that stops mid-way is answered 408 in the JSON shape, chunked or not", async () => {
    const { key } = await s.account("business");
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Slow ${uniq()}` } })).body.data.waitlist;
    const port = Number(new URL(s.url).port);

    const open = (first: string) => {
      const state = { closed: false, received: "" };
      const socket = Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          data: (_s, chunk) => void (state.received += new TextDecoder().decode(chunk)),
          close: () => void (state.closed = true),
          error: () => void (state.closed = true),
        },
      });
      return socket.then((sock) => (sock.write(first), state));
    };
    const started = Date.now();
    const signUp = `POST /api/v1/waitlist/${w.key}/sign-up HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\n`;
    const [headers, body, chunked] = await Promise.all([
      open(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `),
      open(`${signUp}Content-Length: 100\r\n\r\n{"email":`),
      open(`${signUp}Transfer-Encoding: chunked\r\n\r\n9\r\n{"email":\r\n`),
    ]);
    const answered = (c: { received: string }) => c.received.includes("\r\n\r\n{");
    await until(() => headers.closed && answered(body) && answered(chunked), 20_000, "slow connections cut off");
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(headers.received).toBe("");
    for (const c of [body, chunked]) {
      expect(c.received).toStartWith("HTTP/1.1 408");
      expect(JSON.parse(c.received.slice(c.received.indexOf("\r\n\r\n") + 4))).toEqual({ statusCode: 408, error: "Request Timeout", message: expect.stringContaining("8 s") });
    }
    // nothing was signed up
    expect((await s.request("GET", `/api/v1/waitlist/${w.key}/stats`, { key })).body.data.subscribers_total).toBe(0);
  }, 30_000);
});
