// DESIGN §5: a 500 is logged with the cause and a request id, and answers a generic message that leaks nothing.
import { expect, test } from "bun:test";
import { Elysia } from "elysia";
import { errorHandler } from "../src/http/error-handler";
import { requestLog } from "../src/http/request-log";
import { createLogger } from "../src/log";

test("an unexpected error is a generic 500 naming the request id; the cause goes to the log only", async () => {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l));
  const app: Elysia = new Elysia()
    .use(errorHandler({ log, routes: () => app.routes }))
    .use(requestLog(log))
    .get("/boom", () => {
      throw new Error("secret internal detail");
    }) as unknown as Elysia;
  const res = await app.handle(new Request("http://localhost/boom"));
  expect(res.status).toBe(500);
  const reqId = res.headers.get("x-request-id")!;
  const body = await res.json();
  expect(body).toEqual({ statusCode: 500, error: "Internal Server Error", message: `Internal server error (request id ${reqId})` });
  expect(JSON.stringify(body)).not.toContain("secret");
  const entry = lines.map((l) => JSON.parse(l)).find((e) => e.level === "error");
  expect(entry).toMatchObject({ msg: "unhandled error", req_id: reqId, path: "/boom", error: "secret internal detail" });
  expect(entry.stack).toContain("secret internal detail");
});
