// Security headers on every response (issue 10): a route's own headers win (pages, the dashboard and
// Swagger UI send a CSP for their content); everything else, JSON included, gets the strictest set.
import { Elysia } from "elysia";

/** For responses that are not pages: nothing may load from them, nothing may frame them. */
export const DEFAULT_SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;

export function securityHeaders() {
  return new Elysia({ name: "http/security-headers" }).onRequest(({ set }) => {
    // Elysia fills these into a returned Response only where the route did not set the header itself
    Object.assign(set.headers, DEFAULT_SECURITY_HEADERS);
  });
}
