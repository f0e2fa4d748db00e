// Signed webhook delivery: HMAC-SHA256 over the exact raw body (and Standard Webhooks v1 beside it), 10 s timeout,
// any 2xx is success (spec: Events).
import { createHmac } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isPrivateAddress } from "../waitlists/hosts";

export const WEBHOOK_TIMEOUT_MS = 10_000;

export const signature = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/**
 * Issue 49: the Standard Webhooks v1 signature (standardwebhooks.com): base64 HMAC-SHA256, keyed with the secret's
 * bytes (what follows `whsec_`, base64; ours are base62, which base64 reads as it is), over `id.timestamp.body`.
 */
export function standardSignature(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampS}.${body}`).digest("base64")}`;
}

/** With WEBHOOK_BLOCK_PRIVATE the target's addresses are checked at delivery too (a name may resolve privately). */
async function refusePrivate(url: URL): Promise<string | null> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isPrivateAddress(host)) return "webhook URL points at a private address";
  if (isIP(host)) return null;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some((a) => isPrivateAddress(a.address)) ? "webhook URL resolves to a private address" : null;
}

export interface DeliveryResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  ms: number;
  /** The first 1 KB of the receiver's answer (issue 49: the delivery log). */
  response: string | null;
}

/** Where and how a delivery goes: an endpoint's URL, its secrets (two during a rotation's overlap), its headers. */
export interface Target {
  url: string;
  secrets: string[];
  /** The X-Webhook-* headers beside Standard Webhooks' (issue 49: the endpoint made from the old setting). */
  legacy: boolean;
}

const RESPONSE_KEPT = 1024;

/** Up to 1 KB of a body, the rest left unread. */
async function head(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_KEPT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // what arrived is kept
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_KEPT);
  return new TextDecoder().decode(bytes).replace(/\uFFFD$/, "");
}

function headers(target: Target, body: string, meta: { id: string; type: string; createdAt: number }): Record<string, string> {
  // Standard Webhooks v1: the attempt's time, so a retry verifies within a receiver's tolerance (5 minutes in the
  // reference libraries); during a rotation's overlap both signatures, space-separated
  const timestamp = Math.floor(Date.now() / 1000);
  const standard = {
    "webhook-id": meta.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": target.secrets.map((s) => standardSignature(s, meta.id, timestamp, body)).join(" "),
  };
  if (!target.legacy) return standard;
  return {
    "x-webhook-id": meta.id,
    "x-webhook-event": meta.type,
    "x-webhook-timestamp": String(meta.createdAt),
    "x-webhook-signature": signature(target.secrets[0]!, body),
    ...standard,
  };
}

export async function deliver(target: Target, body: string, meta: { id: string; type: string; createdAt: number }, opts: { blockPrivate: boolean }): Promise<DeliveryResult> {
  const started = performance.now();
  const result = (ok: boolean, status: number | null, error: string | null, response: string | null = null): DeliveryResult => ({
    ok,
    status,
    error,
    response,
    ms: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return result(false, null, "invalid webhook URL");
  }
  if (opts.blockPrivate) {
    const refused = await refusePrivate(url);
    if (refused) return result(false, null, refused);
  }
  try {
    const res = await fetch(url, {
      method: "POST",
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      headers: { "content-type": "application/json", "user-agent": "Waitlist-Webhooks/1.0", ...headers(target, body, meta) },
    });
    const response = await head(res);
    return res.status >= 200 && res.status < 300 ? result(true, res.status, null, response) : result(false, res.status, `receiver answered ${res.status}`, response);
  } catch (err) {
    const name = (err as Error)?.name;
    return result(false, null, name === "TimeoutError" || name === "AbortError" ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : `could not connect: ${(err as Error)?.message ?? err}`);
  }
}
