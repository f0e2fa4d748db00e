// The client's IP: the socket peer, or the first X-Forwarded-For hop when TRUST_PROXY is on.
import type { Server } from "bun";

export function clientIp(request: Request, server: Server<unknown> | null | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded) return forwarded.split(",")[0].trim();
  }
  return server?.requestIP(request)?.address.replace(/^::ffff:/, "") ?? "unknown";
}

/** The Host the client asked for, lowercase, without port or trailing dot (Caddy passes it through unchanged). */
export const requestHost = (request: Request): string => (request.headers.get("host") ?? "").toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");
