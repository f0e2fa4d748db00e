// The closed list of error codes, their statuses and the spec's three error body shapes (spec: Errors).
export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "payment_required"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "request_timeout"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "rate_limited"
  | "internal"
  | "bad_gateway"
  | "unavailable"
  | "timeout";

export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  timeout: 504,
};

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** A domain error: services throw it, the one error handler turns it into the route's shape. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
  get status(): number {
    return STATUS[this.code];
  }
}

export const badRequest = (message: string) => new AppError("bad_request", message);
export const unauthorized = (message = "Invalid API key") => new AppError("unauthorized", message);
export const forbidden = (message: string) => new AppError("forbidden", message);
export const notFound = (message: string) => new AppError("not_found", message);
export const conflict = (message: string) => new AppError("conflict", message);

/**
 * Which body a route's errors use: sign-up 400/429 are `{statusCode, message}`, log-view 400 is
 * `{success:false, error:{code:'invalid_request', message}}`; everything else `{statusCode, error, message}`.
 */
export type ErrorShape = "standard" | "signup" | "logview";

export function errorBody(shape: ErrorShape, status: number, message: string, data?: Record<string, unknown>) {
  if (shape === "logview" && status === 400) return { success: false, error: { code: "invalid_request", message } };
  const extra = data ? { data } : {};
  if (shape === "signup" && (status === 400 || status === 429)) return { statusCode: status, message, ...extra };
  return { statusCode: status, error: STATUS_TEXT[status] ?? "Error", message, ...extra };
}
