// OpenAPI descriptions of the error bodies (http/errors.ts builds them), for routes' `response` maps and the document.
// Apart from errors.ts so that the admin commands, which throw its errors, do not load Elysia.
import { t } from "elysia";
import type { ErrorShape } from "./errors";

export const ErrorBody = t.Object(
  { statusCode: t.Number(), error: t.String(), message: t.String(), data: t.Optional(t.Object({ retry_after: t.Number() })) },
  { description: "Error: `error` is the status text" },
);
export const SignUpErrorBody = t.Object(
  { statusCode: t.Number(), message: t.String(), data: t.Optional(t.Object({ retry_after: t.Number() })) },
  { description: "Sign-up 400/429 error" },
);
export const LogViewErrorBody = t.Object(
  { success: t.Literal(false), error: t.Object({ code: t.Literal("invalid_request"), message: t.String() }) },
  { description: "Log-view 400 error" },
);

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorBody]));

/** DESIGN §5: a 429 always says when, in whole seconds from 1 to 60. */
const RetryData = t.Object({ retry_after: t.Integer({ minimum: 1, maximum: 60 }) });
export const RateLimitedBody = t.Object({ statusCode: t.Literal(429), error: t.String(), message: t.String(), data: RetryData }, { description: "Rate limit exceeded" });
export const SignUpRateLimitedBody = t.Object({ statusCode: t.Literal(429), message: t.String(), data: RetryData }, { description: "Sign-up rate limit exceeded" });

/** The body schema `errorBody(shape, status, ...)` answers with, for the OpenAPI document (docs/document.ts). */
export function errorSchema(shape: ErrorShape, status: number) {
  if (shape === "logview" && status === 400) return LogViewErrorBody;
  if (status === 429) return shape === "signup" ? SignUpRateLimitedBody : RateLimitedBody;
  if (shape === "signup" && status === 400) return SignUpErrorBody;
  return ErrorBody;
}
