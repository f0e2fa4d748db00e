// Host names in settings (allowed domains, custom domain) and the private-address rule for webhook URLs.
import { isIP } from "node:net";
import { badRequest } from "../http/errors";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A bare host name ("example.com", "*.example.com", "localhost", an IP); a pasted URL is reduced to its host. */
export function normalizeHost(raw: string, field: string, allowWildcard: boolean): string {
  let host = raw.trim().toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(host)) {
    try {
      host = new URL(host).hostname;
    } catch {
      throw badRequest(`${field}: "${raw}" is not a valid host name`);
    }
  }
  host = host.replace(/\.$/, "");
  if (isIP(host.replace(/^\[|\]$/g, ""))) return host;
  const wildcard = allowWildcard && host.startsWith("*.");
  const labels = (wildcard ? host.slice(2) : host).split(".");
  if (host.length > 253 || labels.some((l) => !LABEL.test(l))) throw badRequest(`${field}: "${raw}" is not a valid host name`);
  return host;
}

/** Loopback, private, link-local and unspecified addresses (DESIGN §4: WEBHOOK_BLOCK_PRIVATE). */
export function isPrivateAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) {
    const [a, b] = h.split(".").map(Number);
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  if (isIP(h) === 6) {
    if (h === "::" || h === "::1") return true;
    if (h.startsWith("::ffff:")) return isPrivateAddress(h.slice(7));
    return /^f[cd]/.test(h) || /^fe[89ab]/.test(h);
  }
  return false;
}
