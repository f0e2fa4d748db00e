// Request ids and one JSON log line per request (DESIGN §8): req_id, method, path, status, ms.
import { Elysia } from "elysia";
import { token } from "../clock";
import { checkDeclaredLength } from "./body-limit";
import { requestEnded, requestStarted } from "./foreground";
import type { Logger } from "../log";
import type { RequestObserver } from "./metrics";

/**
 * When a request started and its id, kept on the request itself: a WeakMap entry per request was costlier to add,
 * and its weak entries are more work for every collection than an expando's.
 */
const STARTED = Symbol("request started");
type Started = { id: string; at: number };
const startOf = (request: Request): Started | undefined => (request as unknown as { [STARTED]?: Started })[STARTED];

export const requestId = (request: Request): string => startOf(request)?.id ?? "-";

/**
 * The status the client got: a route that returns a `Response` (pages, the form, redirects) carries its
 * own status, which Elysia does not copy into `set.status` (issue 17: those were logged as 200).
 */
export function sentStatus(response: unknown, status: number | string | undefined): number {
  if (response instanceof Response) return response.status;
  return typeof status === "number" ? status : Number(status) || 200;
}

/** `observe`: the metrics' per-response hook (http/metrics.ts), only when METRICS_TOKEN is set. */
export function requestLog(log: Logger, observe?: RequestObserver) {
  return new Elysia({ name: "http/request-log" })
    .onRequest(({ request, set }) => {
      requestStarted(request);
      const id = token(16);
      (request as unknown as { [STARTED]: Started })[STARTED] = { id, at: performance.now() };
      set.headers["x-request-id"] = id;
      if (log.enabled("debug")) log.debug("request started", { req_id: id, method: request.method, path: new URL(request.url).pathname });
      // a declared larger body is refused before it is read; undeclared (chunked) ones are capped as read (body-limit.ts)
      checkDeclaredLength(request);
    })
    .onAfterResponse({ as: "global" }, ({ request, path, route, set, responseValue }) => {
      requestEnded(request);
      const s = startOf(request);
      const ms = s ? performance.now() - s.at : 0;
      const status = sentStatus(responseValue, set.status);
      log.info("request", { req_id: s?.id, method: request.method, path, status, ms: s ? Math.round(ms * 100) / 100 : undefined });
      try {
        observe?.(request.method, route, status, ms / 1000, responseValue);
      } catch (err) {
        // a throw here, after the response, would end the process
        log.error("metrics failed", { error: err instanceof Error ? err.message : String(err) });
      }
    });
}
