// The client's IP: the socket peer, or the first X-Forwarded-For hop when TRUST_PROXY is on; always in one textual form.
import { isIP } from "node:net";
import type { Server } from "bun";

/**
 * One textual form per address (issue 16), so equal addresses compare equal (fraud rules, rate limits):
 * IPv4 as is; IPv6 lowercase and compressed (RFC 5952, via the URL parser); IPv4-mapped IPv6
 * (`::ffff:1.2.3.4`) as the IPv4 address. Brackets are dropped; a zone (`%eth0`) or anything else is null.
 */
export function normalizeIp(raw: string): string | null {
  const ip = raw.trim().replace(/^\[(.*)\]$/, "$1");
  const version = isIP(ip);
  if (version === 4) return ip;
  if (version !== 6 || ip.includes("%")) return null;
  let compressed: string;
  try {
    compressed = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function clientIp(request: Request, server: Server<unknown> | null | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for");
    const first = forwarded ? normalizeIp(forwarded.split(",")[0]) : null;
    if (first) return first;
  }
  const peer = server?.requestIP(request)?.address;
  return (peer && normalizeIp(peer)) ?? "unknown";
}

/** The Host the client asked for, lowercase, without port or trailing dot (Caddy passes it through unchanged). */
export const requestHost = (request: Request): string => (request.headers.get("host") ?? "").toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");
