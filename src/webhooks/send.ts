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

export interface DeliveryResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  ms: number;
}

/** With WEBHOOK_BLOCK_PRIVATE the target's addresses are checked at delivery too (a name may resolve privately). */
async function refusePrivate(url: URL): Promise<string | null> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isPrivateAddress(host)) return "webhook URL points at a private address";
  if (isIP(host)) return null;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some((a) => isPrivateAddress(a.address)) ? "webhook URL resolves to a private address" : null;
}

function standardHeaders(secret: string, id: string, body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": standardSignature(secret, id, timestamp, body) };
}

export async function deliver(
  target: string,
  secret: string,
  body: string,
  meta: { id: string; type: string; createdAt: number },
  opts: { blockPrivate: boolean },
): Promise<DeliveryResult> {
  const started = performance.now();
  const result = (ok: boolean, status: number | null, error: string | null): DeliveryResult => ({ ok, status, error, ms: Math.round(performance.now() - started) });
  let url: URL;
  try {
    url = new URL(target);
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
      headers: {
        "content-type": "application/json",
        "user-agent": "Waitlist-Webhooks/1.0",
        "x-webhook-id": meta.id,
        "x-webhook-event": meta.type,
        "x-webhook-timestamp": String(meta.createdAt),
        "x-webhook-signature": signature(secret, body),
        // Standard Webhooks v1 beside our own headers (issue 49): the attempt's time, so a retry verifies within a
        // receiver's tolerance (5 minutes in the reference libraries)
        ...standardHeaders(secret, meta.id, body),
      },
    });
    await res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300 ? result(true, res.status, null) : result(false, res.status, `receiver answered ${res.status}`);
  } catch (err) {
    const name = (err as Error)?.name;
    return result(false, null, name === "TimeoutError" || name === "AbortError" ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : `could not connect: ${(err as Error)?.message ?? err}`);
  }
}
