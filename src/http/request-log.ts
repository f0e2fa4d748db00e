// Request ids and one JSON log line per request (DESIGN §8): req_id, method, path, status, ms.
import { Elysia } from "elysia";
import { token } from "../clock";
import { checkDeclaredLength } from "./body-limit";
import type { Logger } from "../log";

const started = new WeakMap<Request, { id: string; at: number }>();

export const requestId = (request: Request): string => started.get(request)?.id ?? "-";

export function requestLog(log: Logger) {
  return new Elysia({ name: "http/request-log" })
    .onRequest(({ request, set }) => {
      const id = token(16);
      started.set(request, { id, at: performance.now() });
      set.headers["x-request-id"] = id;
      if (log.enabled("debug")) log.debug("request started", { req_id: id, method: request.method, path: new URL(request.url).pathname });
      // a declared larger body is refused before it is read; undeclared (chunked) ones are capped as read (body-limit.ts)
      checkDeclaredLength(request);
    })
    .onAfterResponse({ as: "global" }, ({ request, path, set }) => {
      const s = started.get(request);
      log.info("request", {
        req_id: s?.id,
        method: request.method,
        path,
        status: typeof set.status === "number" ? set.status : Number(set.status) || 200,
        ms: s ? Math.round((performance.now() - s.at) * 100) / 100 : undefined,
      });
    });
}
