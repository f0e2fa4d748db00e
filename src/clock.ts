// The one source of time and randomness (STYLE: tests reason about both through here).
import { createHash } from "node:crypto";

export const now = (): number => Date.now();

/** The UTC date of a timestamp, `YYYY-MM-DD` (daily counters, the view-hash salt). */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string; `length` 43 carries ~256 bits. Rejection sampling keeps it uniform. */
export function token(length = 24): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export const sha256Hex = (value: string): string => createHash("sha256").update(value).digest("hex");
