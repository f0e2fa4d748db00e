// Issue 48: the people of an account: users with roles, single-use links (an invitation, a password reset), sessions
// kept in the database (any instance reads and revokes them), sign-in with a password and TOTP, and the throttle on
// failed sign-ins. Tokens are stored only as their SHA-256; a session's CSRF token is sent back by the dashboard.
import { sql } from "drizzle-orm";
import * as OTPAuth from "otpauth";
import { now, sha256Hex, sortableToken, token } from "../clock";
import type { Db } from "../db/db";
import { ROLES, type PlanId, type Role } from "../db/schema";
import { AppError, badRequest, conflict, forbidden, notFound, unauthorized } from "../http/errors";
import { setTarget } from "../audit/scope";
import { checkPassword, hashPassword, verifyPassword } from "./passwords";

export const INVITE_MS = 7 * 86_400_000;
export const RESET_MS = 3_600_000;
export const SESSION_MS = 30 * 86_400_000;
/** More than this many failed sign-ins for one address or one IP within the window answer 429. */
export const FAILURES_MAX = 10;
export const FAILURE_WINDOW_MS = 15 * 60_000;
const RECOVERY_CODES = 10;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  name: string | null;
  role: Role;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: number | null;
  recovery_codes: string | null;
  created_at: number;
}

export const userView = (u: Pick<UserRow, "id" | "email" | "name" | "role" | "totp_enabled_at" | "password_hash" | "created_at">) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  totp: u.totp_enabled_at !== null,
  /** false until the invitation is accepted. */
  active: u.password_hash !== null,
  created_at: Number(u.created_at),
});

export function parseRole(value: string, field = "role"): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw badRequest(`${field} must be one of: ${ROLES.join(", ")}`);
  return value as Role;
}

/** Rank of a role: a higher one may do all a lower one may. */
export const rank = (role: Role) => ROLES.length - ROLES.indexOf(role);

function parseEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) throw badRequest("email must be a valid email address");
  return email;
}

export async function userById(db: Db, id: string): Promise<UserRow | undefined> {
  const [u] = await db.rows<UserRow>(sql`SELECT * FROM users WHERE id = ${id}`);
  return u;
}

/** A new user and their invitation link's token (7 days, single use). 409 if the address has a user already. */
export async function createUser(db: Db, accountId: string, input: { email: string; role: string; name?: string | null }) {
  const email = parseEmail(input.email);
  const role = parseRole(input.role);
  const name = input.name?.trim() || null;
  if (name && name.length > 100) throw badRequest("name must be at most 100 characters");
  const at = now();
  const id = `usr_${token(20)}`;
  const invite = token(43);
  setTarget(`account/users/${id}`);
  try {
    await db.write([
      sql`INSERT INTO users (id, account_id, email, name, role, created_at, updated_at) VALUES (${id}, ${accountId}, ${email}, ${name}, ${role}, ${at}, ${at})`,
      sql`INSERT INTO user_tokens (token_hash, user_id, kind, created_at, expires_at) VALUES (${sha256Hex(invite)}, ${id}, 'invite', ${at}, ${at + INVITE_MS})`,
    ]);
  } catch (err) {
    if (db.d.uniqueKey(err) !== null) throw conflict("A user with this email exists already");
    throw err;
  }
  return { user: userView({ id, email, name, role, totp_enabled_at: null, password_hash: null, created_at: at }), token: invite, expiresAt: at + INVITE_MS };
}

/** Where a link's token is used: the dashboard's page for it (a fragment: robots fetching the link change nothing). */
export const linkUrl = (baseUrl: string, kind: "invite" | "reset", t: string) => `${baseUrl}/dashboard#/${kind === "invite" ? "welcome" : "reset"}/${t}`;

export async function listUsers(db: Db, accountId: string) {
  const rows = await db.rows<UserRow>(sql`SELECT * FROM users WHERE account_id = ${accountId} ORDER BY created_at, id`);
  return rows.map(userView);
}

async function ownersLeft(db: Db, accountId: string, except: string): Promise<number> {
  const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM users WHERE account_id = ${accountId} AND role = 'owner' AND id <> ${except}`);
  return Number(n);
}

export async function updateUser(db: Db, accountId: string, id: string, patch: { role?: string; name?: string | null }) {
  const u = await userById(db, id);
  if (!u || u.account_id !== accountId) throw notFound("User not found");
  const role = patch.role === undefined ? u.role : parseRole(patch.role);
  if (u.role === "owner" && role !== "owner" && (await ownersLeft(db, accountId, id)) === 0) throw conflict("The account's last owner can't change role: make another user owner first");
  const name = patch.name === undefined ? u.name : patch.name?.trim() || null;
  await db.exec(sql`UPDATE users SET role = ${role}, name = ${name}, updated_at = ${now()} WHERE id = ${id}`);
  return userView({ ...u, role, name });
}

export async function deleteUser(db: Db, accountId: string, id: string) {
  const u = await userById(db, id);
  if (!u || u.account_id !== accountId) throw notFound("User not found");
  if (u.role === "owner" && (await ownersLeft(db, accountId, id)) === 0) throw conflict("The account's last owner can't be removed");
  await db.exec(sql`DELETE FROM users WHERE id = ${id}`);
  return { success: true, message: "User removed; their sessions no longer work" };
}

// ---- links ------------------------------------------------------------------------------------------------------

/** Sets a password by a link's token (an invitation or a reset): the token is used up; a session starts. */
export async function usePasswordLink(db: Db, t: string, password: string, client: Client, name?: string | null) {
  const hash = sha256Hex(t);
  const [row] = await db.rows<{ user_id: string; kind: string; expires_at: number; used_at: number | null }>(sql`SELECT user_id, kind, expires_at, used_at FROM user_tokens WHERE token_hash = ${hash}`);
  if (!row || row.used_at !== null || Number(row.expires_at) < now()) throw new AppError("bad_request", "This link is invalid, used or expired: ask for a new one");
  const u = (await userById(db, row.user_id))!;
  checkPassword(password, u.email);
  const passwordHash = await hashPassword(password);
  const at = now();
  const [used] = await db.write([
    sql`UPDATE user_tokens SET used_at = ${at} WHERE token_hash = ${hash} AND used_at IS NULL RETURNING token_hash`,
    sql`UPDATE users SET password_hash = ${passwordHash}, name = COALESCE(${name?.trim() || null}, name), updated_at = ${at} WHERE id = ${u.id} AND ${db.d.prevChanged} = 1`,
    // a reset ends every session of the user: whoever knew the old password is out
    ...(row.kind === "reset" ? [sql`UPDATE sessions SET revoked_at = ${at} WHERE user_id = ${u.id} AND revoked_at IS NULL`] : []),
  ]);
  // used meanwhile by another request: this one changed nothing
  if (!used?.length) throw new AppError("bad_request", "This link is invalid, used or expired: ask for a new one");
  return startSession(db, { ...u, password_hash: passwordHash, name: name?.trim() || u.name }, client);
}

/** A password reset link (1 hour) for the address, if it has a user; null otherwise (the caller answers the same). */
export async function resetToken(db: Db, email: string): Promise<{ user: UserRow; token: string } | null> {
  const [u] = await db.rows<UserRow>(sql`SELECT * FROM users WHERE email = ${email.trim().toLowerCase()}`);
  if (!u) return null;
  const t = token(43);
  const at = now();
  await db.exec(sql`INSERT INTO user_tokens (token_hash, user_id, kind, created_at, expires_at) VALUES (${sha256Hex(t)}, ${u.id}, 'reset', ${at}, ${at + RESET_MS})`);
  return { user: u, token: t };
}

// ---- sessions ---------------------------------------------------------------------------------------------------

export interface Client {
  ip: string | null;
  userAgent: string | null;
}

export interface StartedSession {
  token: string;
  csrf: string;
  expiresAt: number;
  user: UserRow;
  publicId: string;
}

export async function startSession(db: Db, u: UserRow, client: Client): Promise<StartedSession> {
  const t = token(43);
  const csrf = token(32);
  const publicId = `ses_${sortableToken(20)}`;
  const at = now();
  await db.exec(sql`INSERT INTO sessions (id, public_id, user_id, csrf, created_at, expires_at, ip, user_agent)
    VALUES (${sha256Hex(t)}, ${publicId}, ${u.id}, ${csrf}, ${at}, ${at + SESSION_MS}, ${client.ip}, ${client.userAgent?.slice(0, 256) ?? null})`);
  return { token: t, csrf, expiresAt: at + SESSION_MS, user: u, publicId };
}

export interface SessionRow {
  public_id: string;
  csrf: string;
  expires_at: number;
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  account_id: string;
  username: string;
  plan: PlanId;
  ai_credits: number;
}

/** The session of a cookie's token, with its user and account, if it works (not revoked, not expired). */
export async function sessionByToken(db: Db, t: string): Promise<SessionRow | undefined> {
  const [row] = await db.rows<SessionRow>(sql`SELECT s.public_id, s.csrf, s.expires_at, u.id AS user_id, u.email, u.name, u.role, u.account_id,
      a.username, a.plan, a.ai_credits
    FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id WHERE s.id = ${sha256Hex(t)} AND s.revoked_at IS NULL`);
  return row && Number(row.expires_at) > now() ? { ...row, expires_at: Number(row.expires_at), ai_credits: Number(row.ai_credits) } : undefined;
}

export async function listSessions(db: Db, accountId: string, userId?: string) {
  const rows = await db.rows<{ public_id: string; user_id: string; email: string; created_at: number; expires_at: number; ip: string | null; user_agent: string | null }>(
    sql`SELECT s.public_id, s.user_id, u.email, s.created_at, s.expires_at, s.ip, s.user_agent FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE u.account_id = ${accountId} AND s.revoked_at IS NULL AND s.expires_at > ${now()} ${userId ? sql`AND s.user_id = ${userId}` : sql``}
      ORDER BY s.created_at DESC, s.public_id DESC`,
  );
  return rows.map((r) => ({ id: r.public_id, user_id: r.user_id, user_email: r.email, created_at: Number(r.created_at), expires_at: Number(r.expires_at), ip: r.ip, user_agent: r.user_agent }));
}

/** Revokes a session of the account; `onlyUser`: one of that user's (a user revoking their own). */
export async function revokeSession(db: Db, accountId: string, publicId: string, onlyUser?: string) {
  setTarget(`account/sessions/${publicId}`);
  const { changed } = await db.exec(sql`UPDATE sessions SET revoked_at = ${now()} WHERE public_id = ${publicId} AND revoked_at IS NULL
    AND user_id IN (SELECT id FROM users WHERE account_id = ${accountId} ${onlyUser ? sql`AND id = ${onlyUser}` : sql``})`);
  if (changed === 0) throw notFound("Session not found (or revoked already)");
  return { success: true, message: "Session revoked: its next request is refused" };
}

// ---- sign-in ----------------------------------------------------------------------------------------------------

/** 429 while the address or the IP is over the failures allowed in the window. */
async function throttle(db: Db, subjects: string[]) {
  const at = now();
  const rows = await db.rows<{ subject: string; n: number; oldest: number }>(
    sql`SELECT subject, count(*) AS n, min(at) AS oldest FROM sign_in_failures WHERE subject IN (${sql.join(subjects.map((s) => sql`${s}`), sql`, `)}) AND at > ${at - FAILURE_WINDOW_MS} GROUP BY subject`,
  );
  const over = rows.filter((r) => Number(r.n) >= FAILURES_MAX);
  if (over.length) {
    const retryAfter = Math.max(1, Math.ceil((Math.max(...over.map((r) => Number(r.oldest))) + FAILURE_WINDOW_MS - at) / 1000));
    throw new AppError("rate_limited", `Too many failed sign-ins: try again in ${retryAfter} s`, { retry_after: retryAfter });
  }
}

const failed = (db: Db, subjects: string[]) =>
  db.write([
    ...subjects.map((s) => sql`INSERT INTO sign_in_failures (id, subject, at) VALUES (${token(20)}, ${s}, ${now()})`),
    sql`DELETE FROM sign_in_failures WHERE at < ${now() - FAILURE_WINDOW_MS}`,
  ]);

export async function signIn(db: Db, input: { email: string; password: string; totp_code?: string }, client: Client): Promise<StartedSession> {
  const email = input.email.trim().toLowerCase();
  const subjects = [`email:${email}`, `ip:${client.ip ?? "unknown"}`];
  await throttle(db, subjects);
  const [u] = await db.rows<UserRow>(sql`SELECT * FROM users WHERE email = ${email}`);
  if (!(await verifyPassword(input.password, u?.password_hash ?? null))) {
    await failed(db, subjects);
    throw unauthorized("Wrong email or password");
  }
  if (u!.totp_enabled_at !== null) {
    if (!input.totp_code) throw new AppError("unauthorized", "Enter the 6-digit code of your authenticator app (or a recovery code)", { totp_required: true });
    if (!(await checkSecondFactor(db, u!, input.totp_code))) {
      await failed(db, subjects);
      throw new AppError("unauthorized", "Wrong code", { totp_required: true });
    }
  }
  return startSession(db, u!, client);
}

// ---- TOTP -------------------------------------------------------------------------------------------------------

const totpOf = (u: Pick<UserRow, "email" | "totp_secret">) =>
  new OTPAuth.TOTP({ issuer: "Waitlist", label: u.email, algorithm: "SHA1", digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(u.totp_secret!) });

/** A code of the authenticator (a step either side allowed), or an unused recovery code (used up). */
async function checkSecondFactor(db: Db, u: UserRow, code: string): Promise<boolean> {
  const given = code.replace(/\s+/g, "");
  if (/^\d{6}$/.test(given)) return totpOf(u).validate({ token: given, window: 1 }) !== null;
  const hashes = (u.recovery_codes ?? "").split(",").filter(Boolean);
  const hash = sha256Hex(given.toLowerCase());
  if (!hashes.includes(hash)) return false;
  const left = hashes.filter((h) => h !== hash).join(",");
  const { changed } = await db.exec(sql`UPDATE users SET recovery_codes = ${left} WHERE id = ${u.id} AND recovery_codes = ${u.recovery_codes}`);
  return changed === 1;
}

/** Starts turning TOTP on: a new secret, shown once as an otpauth:// URI; on once a code of it is confirmed. */
export async function startTotp(db: Db, u: UserRow) {
  if (u.totp_enabled_at !== null) throw conflict("Two-factor sign-in is on already: turn it off first to set up a new authenticator");
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  await db.exec(sql`UPDATE users SET totp_secret = ${secret}, updated_at = ${now()} WHERE id = ${u.id}`);
  return { secret, otpauth_url: totpOf({ email: u.email, totp_secret: secret }).toString() };
}

export async function confirmTotp(db: Db, u: UserRow, code: string) {
  if (u.totp_enabled_at !== null) throw conflict("Two-factor sign-in is on already");
  if (!u.totp_secret) throw badRequest("Start with POST /api/v1/session/totp to get a secret first");
  if (totpOf(u).validate({ token: code.replace(/\s+/g, ""), window: 1 }) === null) throw badRequest("code is not the current code of the authenticator");
  const codes = Array.from({ length: RECOVERY_CODES }, () => token(10).toLowerCase());
  await db.exec(sql`UPDATE users SET totp_enabled_at = ${now()}, recovery_codes = ${codes.map(sha256Hex).join(",")}, updated_at = ${now()} WHERE id = ${u.id}`);
  return { recovery_codes: codes };
}

export async function disableTotp(db: Db, u: UserRow, password: string) {
  if (!(await verifyPassword(password, u.password_hash))) throw forbidden("Wrong password");
  await db.exec(sql`UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, recovery_codes = NULL, updated_at = ${now()} WHERE id = ${u.id}`);
  return { success: true, message: "Two-factor sign-in is off" };
}
