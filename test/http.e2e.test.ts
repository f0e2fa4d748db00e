// Cross-cutting HTTP behaviour (DESIGN §5, §8): JSON 404/405, health, logs, OpenAPI, graceful SIGTERM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.stop());

describe("unknown routes and methods", () => {
  test("an unknown route is a JSON 404 in the standard shape", async () => {
    for (const path of ["/nope", "/api/v1/nothing-here", "/api/v2/me"]) {
      const r = await s.request("GET", path);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toContain("application/json");
      expect(r.body).toEqual({ statusCode: 404, error: "Not Found", message: expect.stringContaining(path) });
    }
  });

  test("a known route with the wrong method is a JSON 405 with an Allow header", async () => {
    const r = await s.request("PUT", "/api/v1/waitlists");
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ statusCode: 405, error: "Method Not Allowed", message: expect.stringContaining("PUT") });
    expect(r.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "POST"]);
    const d = await s.request("DELETE", "/api/v1/me");
    expect(d.status).toBe(405);
    expect(d.headers.get("allow")).toBe("GET");
  });
});

test("a body over 1 MB is 413 in the JSON error shape and creates nothing", async () => {
  const { key } = await s.account();
  const big = await s.request("POST", "/api/v1/waitlists", { key, body: { name: "x".repeat(1_100_000) } });
  expect(big.status).toBe(413);
  expect(big.body).toEqual({ statusCode: 413, error: "Payload Too Large", message: expect.stringContaining("1 MB") });
  expect((await s.request("GET", "/api/v1/waitlists", { key })).body.data.total).toBe(0);
});

test("a blank subscriber id or email is 400 (spec: missing subscriber id/email)", async () => {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Blank ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  for (const method of ["GET", "PUT", "DELETE"]) {
    const r = await s.request(method, `/api/v1/waitlist/${w.key}/subscribers/%20`, { key, ...(method === "PUT" ? { body: { name: "x" } } : {}) });
    expect(r.status, method).toBe(400);
    expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: "Missing subscriber id or email" });
  }
});

test("GET /healthz answers {status: ok} after a database round trip", async () => {
  const r = await s.request("GET", "/healthz");
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ status: "ok" });
});

test("every request is logged as one JSON line with req_id, method, path, status and ms, never the key", async () => {
  const { key } = await s.account();
  const r = await s.request("GET", "/api/v1/me?trace=1", { key });
  const reqId = r.headers.get("x-request-id");
  expect(reqId).toMatch(/^[A-Za-z0-9]{16}$/);
  const line = await until(() => s.logs.map((l) => JSON.parse(l)).find((e) => e.req_id === reqId), 5_000, "request log line");
  expect(line).toMatchObject({ level: "info", msg: "request", req_id: reqId, method: "GET", path: "/api/v1/me", status: 200 });
  expect(typeof line.ms).toBe("number");
  const bad = await s.request("GET", "/api/v1/me", { key: "wl_acct_notarealkey" });
  await until(() => s.logs.some((l) => l.includes(bad.headers.get("x-request-id")!)), 5_000, "401 log line");
  for (const l of s.logs) {
    expect(() => JSON.parse(l)).not.toThrow();
    expect(l).not.toContain(key);
    expect(l).not.toContain("wl_acct_notarealkey");
  }
});

describe("OpenAPI", () => {
  test("/swagger/json is OpenAPI 3 version 1.0.0 with the X-Api-Key scheme on every API operation", async () => {
    const r = await s.request("GET", "/swagger/json");
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.components.securitySchemes.ApiKey).toEqual({ type: "apiKey", in: "header", name: "X-Api-Key" });
    const expected: [string, string][] = [
      ["get", "/api/v1/me"],
      ["post", "/api/v1/waitlists"],
      ["get", "/api/v1/waitlists"],
      ["get", "/api/v1/waitlist/{waitlistKey}/settings"],
      ["patch", "/api/v1/waitlist/{waitlistKey}/settings"],
      ["post", "/api/v1/waitlist/{waitlistKey}/api-key"],
      ["post", "/api/v1/account/keys"],
      ["delete", "/api/v1/account/keys/{id}"],
      ["get", "/healthz"],
      ["post", "/api/v1/waitlist/{waitlistKey}/sign-up"],
      ["get", "/api/v1/waitlist/{waitlistKey}/subscribers"],
      ["get", "/api/v1/waitlist/{waitlistKey}/subscribers/export"],
      ["get", "/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}"],
      ["put", "/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}"],
      ["delete", "/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}"],
      ["get", "/api/v1/waitlist/{waitlistKey}/tags"],
      ["post", "/api/v1/waitlist/{waitlistKey}/tags"],
      ["delete", "/api/v1/waitlist/{waitlistKey}/tags/{tagId}"],
      ["post", "/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}/tags"],
      ["delete", "/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}/tags/{tagIdOrName}"],
      ["post", "/api/v1/waitlist/{waitlistKey}/log-view"],
      ["get", "/api/v1/waitlist/{waitlistKey}/stats"],
      ["get", "/api/v1/waitlist/{waitlistKey}/stats/daily"],
      ["post", "/api/v1/waitlist/{waitlistKey}/settings/webhook/test"],
      ["post", "/api/v1/waitlist/{waitlistKey}/settings/webhook/rotate-secret"],
      ["post", "/api/v1/waitlist/{waitlistKey}/landing-page"],
      ["get", "/api/v1/waitlist/{waitlistKey}/landing-page"],
      ["patch", "/api/v1/waitlist/{waitlistKey}/landing-page"],
      ["post", "/api/v1/waitlist/{waitlistKey}/landing-page/publish"],
      ["post", "/api/v1/waitlist/{waitlistKey}/landing-page/generate"],
      ["post", "/s/{waitlistKey}"],
    ];
    for (const [method, path] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      // a key, or the dashboard's session (issue 48)
      if (path.startsWith("/api/")) expect(op.security, `${method} ${path}`).toEqual([{ ApiKey: [] }, { Session: [] }]);
    }
    const create = doc.paths["/api/v1/waitlists"].post;
    const schema = create.requestBody.content["application/json"].schema;
    expect(schema.required).toEqual(["name"]);
    expect(schema.properties.name.maxLength).toBe(100);
    expect(create.responses["201"].content["application/json"].schema.properties.data).toBeDefined();
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "409", "429"]));
    // the public form action takes urlencoded, multipart and JSON, and needs no key
    const form = doc.paths["/s/{waitlistKey}"].post;
    expect(Object.keys(form.requestBody.content).sort()).toEqual(["application/json", "application/x-www-form-urlencoded", "multipart/form-data"]);
    expect(form.security).toEqual([]); // issue 16: public operations say so
    // spec: sign-up 400/429 bodies are {statusCode, message}
    const signUp = doc.paths["/api/v1/waitlist/{waitlistKey}/sign-up"].post;
    expect(Object.keys(signUp.responses["400"].content["application/json"].schema.properties).sort()).toEqual(["data", "message", "statusCode"]);
  });

  test("Swagger UI and its assets are served by the binary, with no third-party URL", async () => {
    const page = await s.request("GET", "/swagger");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.startsWith("/")).toBe(true);
      const asset = await fetch(s.url + ref);
      expect(asset.status, ref).toBe(200);
      expect((await asset.text()).length, ref).toBeGreaterThan(50);
    }
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)/);
  });
});

test("SIGTERM lets an in-flight request finish, then exits 0 after closing", async () => {
  const t = await startServer({ env: { LOG_LEVEL: "debug" } });
  const { key } = await t.account();
  // a request whose body is still arriving when the signal lands
  let push!: (chunk: string | null) => void;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(new TextEncoder().encode(chunk)));
    },
  });
  const inflight = fetch(`${t.url}/api/v1/waitlists`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body, duplex: "half" } as RequestInit);
  push('{"name":"Drain ');
  await until(() => t.logs.some((l) => l.includes('"request started"') && l.includes("/api/v1/waitlists")), 5_000, "request to start");
  t.proc.kill("SIGTERM");
  await until(() => t.logs.some((l) => l.includes('"shutting down"')), 5_000, "shutdown log");
  push(`${Math.random().toString(36).slice(2)}"}`);
  push(null);
  const res = await inflight;
  expect(res.status).toBe(201);
  expect(await t.proc.exited).toBe(0);
  const stopped = t.logs.map((l) => JSON.parse(l)).find((e) => e.msg === "stopped");
  expect(stopped).toMatchObject({ signal: "SIGTERM", drained: true });
  await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  await t.stop();
});
