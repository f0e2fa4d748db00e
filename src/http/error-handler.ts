// The one error handler: domain errors, validation, unknown routes and crashes -> the spec's shapes (DESIGN §5).
import { Elysia, ValidationError } from "elysia";
import type { Logger } from "../log";
import { AppError, errorBody, type ErrorShape } from "./errors";
import { validationMessage } from "./validation";
import { ERROR_SHAPE } from "./api";
import { requestId } from "./request-log";
import { htmlResponse, page } from "../pages/layout";
import { escapeHtml } from "../pages/html";
import { isDatabaseUnavailable } from "../db/errors";

const RETRY_AFTER_UNAVAILABLE_S = 5;

export interface RouteEntry {
  method: string;
  path: string;
}

export function errorHandler(deps: { log: Logger; routes: () => RouteEntry[] }) {
  let table: { pattern: RegExp; method: string }[] | null = null;
  const allowedMethods = (path: string): string[] => {
    table ??= deps.routes().map((r) => ({
      method: r.method,
      pattern: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}/?$`),
    }));
    return [...new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method))];
  };

  return new Elysia({ name: "http/error-handler" }).onError({ as: "global" }, (ctx) => {
    const { code, set, request, path } = ctx;
    // a body problem found while parsing (http/body-limit.ts) reaches here wrapped in Elysia's ParseError
    const error = code === "PARSE" && (ctx.error as Error).cause instanceof AppError ? ((ctx.error as Error).cause as AppError) : ctx.error;
    const shape: ErrorShape = (ctx as any)[ERROR_SHAPE] ?? "standard";
    let status: number;
    let message: string;
    let data: Record<string, unknown> | undefined;

    if (error instanceof AppError) {
      status = error.status;
      message = error.message;
      data = error.data;
      // a 429 says when to come back (the rate limits set it with their other headers; a throttle of its own here)
      if (status === 429 && typeof data?.retry_after === "number") set.headers["retry-after"] ??= String(data.retry_after);
    } else if (error instanceof ValidationError && error.type !== "response") {
      status = 400;
      message = validationMessage(error);
    } else if (code === "NOT_FOUND") {
      const allowed = allowedMethods(path);
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        status = 405;
        message = `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`;
        set.headers["allow"] = allowed.join(", ");
      } else {
        status = 404;
        message = `No route for ${request.method} ${path}`;
      }
    } else if (code === "PARSE" || code === "INVALID_COOKIE_SIGNATURE") {
      status = 400;
      message = "Malformed request body";
    } else if (isDatabaseUnavailable(error)) {
      // issue 18: PostgreSQL restarting or unreachable: not the client's fault, and over soon
      status = 503;
      message = "The database is unavailable for a moment; try again shortly";
      set.headers["retry-after"] = String(RETRY_AFTER_UNAVAILABLE_S);
      deps.log.warn("database unavailable", { req_id: requestId(request), method: request.method, path, error: error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error) });
    } else {
      // our bug (a crash, or a response failing its own schema): log the cause, answer generically
      status = 500;
      message = `Internal server error (request id ${requestId(request)})`;
      deps.log.error("unhandled error", {
        req_id: requestId(request),
        method: request.method,
        path,
        code: String(code),
        error: error instanceof Error ? error.message : String(error),
        cause: error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined,
        stack: error instanceof Error ? error.stack : undefined,
      });
    }
    set.status = status;
    // issue 16: a browser's form post or page button that is too large or too slow gets a page, as the form's other errors do
    if ((status === 408 || status === 413) && !path.startsWith("/api/") && (request.headers.get("accept") ?? "").includes("text/html")) {
      const title = status === 413 ? "Too much to send" : "This took too long";
      return htmlResponse(page(title, `<h1>${title}</h1><p>${escapeHtml(message)}</p>`), status);
    }
    set.headers["content-type"] = "application/json";
    return errorBody(shape, status, message, data);
  });
}
