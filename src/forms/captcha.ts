// The ALTCHA proof-of-work captcha of the public form (issue 16, DESIGN §10): no third party. Challenges are
// signed with an instance-wide secret kept in the database (any instance verifies any other's), and a
// solved challenge is spent once, across instances, by an insert-or-fail on captcha_solutions.
import { createHmac } from "node:crypto";
import { sql } from "drizzle-orm";
import { createChallenge, randomInt, verifySolution, type Challenge, type Payload } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import { badRequest } from "../http/errors";

/** The issue's rule: a challenge expires 10 minutes after it was issued. */
export const CHALLENGE_TTL_MS = 10 * 60_000;
/** A payload is a few hundred bytes; anything much larger is not one of ours. */
const PAYLOAD_MAX = 4_000;
/**
 * ALTCHA v2 in deterministic mode: the solver tries counters from 0 until PBKDF2 (1,000 rounds) matches
 * the prefix of the key for a counter drawn from 2,000-6,000, i.e. about a second of a browser's time,
 * while the server verifies with one HMAC (the key's signature).
 */
const ALGORITHM = "PBKDF2/SHA-256";
const COST = 1_000;
const COUNTER = { min: 2_000, max: 6_000 };

export interface Solution {
  signature: string;
  /** When the challenge expires (ms); its row can be pruned after that. */
  expiresAt: number;
}

const secrets = new WeakMap<Db, Promise<{ challenge: string; key: string }>>();

/** The instance-wide signing secret, created once in `meta` so that every instance agrees. */
function secretsOf(db: Db) {
  let found = secrets.get(db);
  if (found) return found;
  found = (async () => {
    await db.exec(sql`INSERT INTO meta (key, value) VALUES ('altcha_hmac_secret', ${token(43)}) ON CONFLICT (key) DO NOTHING`);
    const [row] = await db.rows<{ value: string }>(sql`SELECT value FROM meta WHERE key = 'altcha_hmac_secret'`);
    const challenge = row!.value;
    return { challenge, key: createHmac("sha256", challenge).update("altcha derived-key secret").digest("hex") };
  })().catch((err) => {
    secrets.delete(db);
    throw err;
  });
  secrets.set(db, found);
  return found;
}

/** A fresh challenge for a waitlist's form (the JSON the widget fetches). */
export async function issueChallenge(db: Db, waitlistKey: string): Promise<Challenge> {
  const s = await secretsOf(db);
  return createChallenge({
    algorithm: ALGORITHM,
    cost: COST,
    counter: randomInt(COUNTER.max, COUNTER.min),
    deriveKey,
    // bound to the waitlist, so one waitlist's solutions do not open another's form
    data: { waitlist: waitlistKey },
    expiresAt: Math.floor((now() + CHALLENGE_TTL_MS) / 1000),
    hmacSignatureSecret: s.challenge,
    hmacKeySignatureSecret: s.key,
  });
}

/** The widget's field: base64 of `{challenge, solution}`. */
function parsePayload(raw: string): Payload | null {
  if (raw.length > PAYLOAD_MAX) return null;
  try {
    const value = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
    const ok =
      value && typeof value === "object" && value.challenge && typeof value.challenge === "object" && value.challenge.parameters && typeof value.challenge.parameters === "object" &&
      typeof value.challenge.signature === "string" && value.solution && typeof value.solution === "object";
    return ok ? (value as Payload) : null;
  } catch {
    return null;
  }
}

/**
 * Checks a payload (without spending it): 400 naming `altcha` when it is missing, not a solution of a
 * challenge we issued for this waitlist, or expired.
 */
export async function checkSolution(db: Db, waitlistKey: string, raw: unknown): Promise<Solution> {
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (typeof text !== "string" || !text.trim()) throw badRequest("altcha is required: solve the captcha (the widget, or GET /s/{waitlistKey}/challenge) and send its payload");
  const payload = parsePayload(text.trim());
  if (!payload) throw badRequest("altcha is not a valid captcha payload");
  const s = await secretsOf(db);
  let result: Awaited<ReturnType<typeof verifySolution>>;
  try {
    result = await verifySolution({ challenge: payload.challenge, solution: payload.solution, deriveKey, hmacSignatureSecret: s.challenge, hmacKeySignatureSecret: s.key });
  } catch {
    throw badRequest("altcha is not a valid captcha payload");
  }
  const params = payload.challenge.parameters;
  if (result.expired) throw badRequest("altcha has expired: solve a new captcha");
  // the signature covers the parameters, so a verified challenge has our expiry and waitlist
  if (!result.verified || typeof params.expiresAt !== "number" || params.data?.waitlist !== waitlistKey) throw badRequest("altcha is not a valid captcha solution");
  return { signature: payload.challenge.signature!, expiresAt: params.expiresAt * 1000 };
}

/**
 * Spends a solution: one atomic insert-or-fail, so of any number of uses (on any instance) exactly one wins. On
 * PostgreSQL a concurrent insert of the same signature waits for the first to commit, then does nothing.
 */
export async function spendSolution(db: Db, solution: Solution): Promise<void> {
  const [rows] = await db.write([
    sql`INSERT INTO captcha_solutions (signature, expires_at) VALUES (${solution.signature}, ${solution.expiresAt}) ON CONFLICT (signature) DO NOTHING RETURNING signature`,
  ]);
  if (rows.length === 0) throw badRequest("altcha was already used: solve a new captcha");
}

/** Gives a solution back when the sign-up it was spent on stored nothing (e.g. an invalid email), so the visitor can correct it. */
export const releaseSolution = (db: Db, solution: Solution) => db.exec(sql`DELETE FROM captcha_solutions WHERE signature = ${solution.signature}`);

/** Rows of expired challenges are useless (the challenge itself is refused): cron removes them. */
export const pruneCaptchaSolutions = (db: Db, at = now()) => db.exec(sql`DELETE FROM captcha_solutions WHERE expires_at < ${at}`);
