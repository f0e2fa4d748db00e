// Building blocks of the OpenAPI document's responses: the headers every API answer carries, HTML pages,
// redirects and the error bodies, as plain OpenAPI objects (the parts Elysia's route options can't express).
import type { ErrorShape } from "../http/errors";
import { errorSchema } from "../http/error-schemas";

type Json = Record<string, any>;

/** TypeBox schemas are JSON Schema with symbol keys; the document wants plain JSON. */
export const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema));

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** components.headers: spec "Limits", DESIGN §5, issue 16 item 4. */
export const HEADERS: Record<string, Json> = {
  "X-RateLimit-Limit": { description: "Requests allowed in the current one-minute window", required: true, schema: { type: "integer", minimum: 0 } },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current window, this one counted (0 on a 429)",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  "X-RateLimit-Reset": { description: "End of the current window, whole Unix seconds", required: true, schema: { type: "integer", minimum: 0 } },
  // issue 16 item 4: on every 429
  "Retry-After": { description: "Whole seconds until a retry can succeed (equals data.retry_after)", required: true, schema: { type: "integer", minimum: 1, maximum: 60 } },
  Location: { description: "Where the browser goes next", required: true, schema: { type: "string" } },
};

const RATE_LIMIT_NAMES = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** The rate-limit headers; `required: false` where some answers of a status come before the limit is counted. */
export const rateLimitHeaders = (required: boolean): Json =>
  Object.fromEntries(RATE_LIMIT_NAMES.map((name) => [name, required ? ref(name) : { ...HEADERS[name], required: false }]));
export const RETRY_AFTER = { "Retry-After": ref("Retry-After") };
export const LOCATION = { Location: ref("Location") };

export const HTML = { "text/html": { schema: { type: "string" } } };

export const htmlPage = (description: string): Json => ({ description, content: HTML });
export const redirect = (description: string): Json => ({ description, headers: LOCATION });
export const json = (description: string, schema: unknown): Json => ({ description, content: { "application/json": { schema: plain(schema) } } });

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request: the message names the field",
  401: "Missing, unknown or revoked key, or a key that may not use this waitlist",
  402: "Not enough AI credits",
  403: "The plan does not include this endpoint, or the key may not do this",
  404: "Not found",
  408: "The request body did not arrive in time",
  409: "Conflict",
  410: "Gone",
  413: "The request body is larger than 1 MB",
  422: "Validation failed",
  429: "Rate limit exceeded: retry after data.retry_after seconds",
  500: "Server error (logged with the request id)",
  502: "Upstream failure, safe to retry",
  503: "Temporarily unavailable",
  504: "Timed out",
};

/** An error response in the shape `errorBody(shape, status)` answers with. */
export const errorResponse = (shape: ErrorShape, status: number): Json => json(STATUS_TEXT[status] ?? "Error", errorSchema(shape, status));
