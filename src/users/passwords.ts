// Issue 48: a user's password: long enough, not one of the passwords that lead breach lists (Mozilla's list for
// Firefox Accounts, fxa-common-password-list), hashed with Argon2id (Bun.password).
import commonPasswords from "fxa-common-password-list";
import { badRequest } from "../http/errors";

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** 400 naming `field` unless the password may be used. */
export function checkPassword(password: string, email: string, field = "password"): void {
  if (password.length < PASSWORD_MIN) throw badRequest(`${field} must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw badRequest(`${field} must be at most ${PASSWORD_MAX} characters`);
  const lower = password.toLowerCase();
  if (commonPasswords.test(password) || commonPasswords.test(lower)) throw badRequest(`${field} is one of the most common passwords (found in breach lists); choose another`);
  if (lower === email.toLowerCase() || lower === email.toLowerCase().split("@")[0]) throw badRequest(`${field} must not be your email address`);
  if (new Set(password).size < 4) throw badRequest(`${field} repeats too few characters; choose a longer, less regular one`);
}

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

/** Checks a password against a stored hash; a user without one (an invitation not accepted) never matches. */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  if (!hash) {
    // as long as a real check: whether an address has a user is not told by the time an answer takes
    await Bun.password.verify(password, await (dummyHash ??= hashPassword("not a password of anyone"))).catch(() => false);
    return false;
  }
  return Bun.password.verify(password, hash).catch(() => false);
}

let dummyHash: Promise<string> | null = null;
