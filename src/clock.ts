// The one source of time and randomness (STYLE: tests reason about both through here).

export const now = (): number => Date.now();

let lastDay = { day: NaN, text: "" };
/** The UTC date of a timestamp, `YYYY-MM-DD` (daily counters, the view-hash salt); the last day's text is kept. */
export const dayOf = (ms: number): string => {
  const day = Math.floor(ms / 86_400_000);
  if (day !== lastDay.day) lastDay = { day, text: new Date(ms).toISOString().slice(0, 10) };
  return lastDay.text;
};

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * Random bytes drawn from the system's generator 4 KB at a time: a sign-up makes five tokens, and a call of
 * `getRandomValues` with an array of its own each was ~0.3 us of a token's 0.35 (issue 19).
 */
const pool = new Uint8Array(4096);
let drawn = pool.length;
function randomByte(): number {
  if (drawn === pool.length) {
    crypto.getRandomValues(pool);
    drawn = 0;
  }
  return pool[drawn++];
}

/** A random base62 string; `length` 43 carries ~256 bits. Rejection sampling keeps it uniform. */
export function token(length = 24): string {
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

const base62 = (n: number, width: number): string => {
  let out = "";
  for (let i = 0; i < width; i++, n = Math.floor(n / 62)) out = ALPHABET[n % 62] + out;
  return out;
};

/**
 * A random base62 string that sorts by creation time: 8 characters of milliseconds, then `length - 8`
 * random ones. Rows written together land on the same index page instead of one page each, which
 * more than halved the bytes a sign-up's commit writes (bench/README.md). For keys whose creation
 * time may be known (ids, tokens with >= 90 random bits).
 */
export const sortableToken = (length: number): string => timePrefix(now()) + token(length - 8);

/** `base62(n, width)` made again only when `n` changes: a sign-up draws two sortable tokens and a code, a busy second thousands. */
function lastBase62(width: number): (n: number) => string {
  let last = -1;
  let text = "";
  return (n) => (n === last ? text : ((last = n), (text = base62(n, width))));
}
const timePrefix = lastBase62(8);
const secondPrefix = lastBase62(2);

/**
 * A random base62 code whose first 2 characters change once a second (cycling every ~64 minutes):
 * codes drawn in the same second share an index page, yet they read as random and reveal no order.
 */
export const clusteredCode = (length: number): string => secondPrefix(Math.floor(now() / 1000)) + token(length - 2);

/** Bun's one-call form: a third less than node:crypto's createHash chain (~1 us), and every API request hashes its key. */
export const sha256Hex = (value: string): string => Bun.CryptoHasher.hash("sha256", value, "hex") as string;
