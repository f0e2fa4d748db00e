// Accounts and their keys: creation (admin CLI), plans, AI credits, account keys, per-waitlist keys, the account view.
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { setTarget } from "../audit/scope";
import { now, sha256Hex, token } from "../clock";
import type { Db } from "../db/db";
import { PLANS, type PlanId } from "../db/schema";
import { badRequest, conflict, forbidden, notFound } from "../http/errors";
import type { Auth } from "../http/api";
import { planOf } from "./plans";

export const DEFAULT_AI_CREDITS = 10;
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
export const KEY_NAME_MAX = 100;

/** spec: a key is shown once; only its SHA-256 is stored. ~256 bits of base62 after the prefix. */
export const newAccountKey = () => `wl_acct_${token(43)}`;
export const newWaitlistKey = () => `wl_${token(43)}`;

/** Issue 48: what a list shows of a key to tell it apart: its kind's prefix and 4 characters (~24 of its 256 bits). */
export const keyPrefix = (key: string) => key.slice(0, key.lastIndexOf("_") + 5);

export const SCOPES = ["read", "write"] as const;
type Scope = (typeof SCOPES)[number];
const scopeList = (stored: string) => stored.split(",") as Scope[];

export function parsePlan(value: string): PlanId {
  const plan = value.trim().toLowerCase();
  if (!(PLANS as readonly string[]).includes(plan)) throw badRequest(`plan must be one of: ${PLANS.join(", ")}`);
  return plan as PlanId;
}

function checkKeyName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest("name must not be blank");
  if (trimmed.length > KEY_NAME_MAX) throw badRequest(`name must be at most ${KEY_NAME_MAX} characters`);
  return trimmed;
}

export async function createAccount(db: Db, input: { username: string; plan: PlanId; aiCredits: number; label: string }) {
  const username = input.username.trim();
  if (!USERNAME.test(username)) throw badRequest("username must be 1 to 64 letters, digits or _ . @ -, starting with a letter or digit");
  if (!Number.isInteger(input.aiCredits) || input.aiCredits < 0) throw badRequest("ai credits must be a whole number >= 0");
  const account = { id: `acct_${token(20)}`, username, plan: input.plan, aiCredits: input.aiCredits, createdAt: now() };
  const apiKey = newAccountKey();
  const key = { id: `key_${token(20)}`, accountId: account.id, name: checkKeyName(input.label), hash: sha256Hex(apiKey), createdAt: account.createdAt };
  try {
    await db.write([
      sql`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES (${account.id}, ${username}, ${account.plan}, ${account.aiCredits}, ${account.createdAt})`,
      sql`INSERT INTO api_keys (id, account_id, name, hash, created_at, prefix) VALUES (${key.id}, ${key.accountId}, ${key.name}, ${key.hash}, ${key.createdAt}, ${keyPrefix(apiKey)})`,
    ]);
  } catch (err) {
    if (db.d.uniqueKey(err) !== null) throw conflict(`username "${username}" is taken`);
    throw err;
  }
  return { account: { id: account.id, username, plan: account.plan }, apiKey, keyId: key.id };
}

async function accountByUsername(db: Db, username: string) {
  const { accounts } = db.t;
  const [account] = await db.select().from(accounts).where(eq(accounts.username, username.trim()));
  if (!account) throw notFound(`no account with username "${username.trim()}"`);
  return account;
}

export async function setPlan(db: Db, username: string, plan: PlanId) {
  const account = await accountByUsername(db, username);
  await db.update(db.t.accounts).set({ plan }).where(eq(db.t.accounts.id, account.id));
  return { id: account.id, username: account.username, plan };
}

export async function setCredits(db: Db, username: string, credits: number) {
  if (!Number.isInteger(credits) || credits < 0) throw badRequest("credits must be a whole number >= 0");
  const account = await accountByUsername(db, username);
  await db.update(db.t.accounts).set({ aiCredits: credits }).where(eq(db.t.accounts.id, account.id));
  return { id: account.id, username: account.username, plan: account.plan, ai_credits: credits };
}

export interface KeyLimits {
  /** ["read"] or ["read", "write"] (the default). */
  scopes?: string[];
  /** Waitlist keys the key is limited to; absent: all of the account's. */
  waitlists?: string[];
  /** Who makes it: a key's or a user's id. */
  createdBy?: string | null;
}

/** The scopes as stored ("read" or "read,write"): 400 naming `scopes` for anything else. */
function scopesOf(given: string[] | undefined): string {
  if (given === undefined) return "read,write";
  const unknown = given.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) throw badRequest(`scopes: unknown scope "${unknown}"; allowed: read, write`);
  if (!given.includes("read")) throw badRequest('scopes must include "read" (a key that can write can read)');
  return given.includes("write") ? "read,write" : "read";
}

/** The ids of the account's waitlists named by key: 400 naming `waitlists` for one it does not own. */
async function waitlistIdsOf(db: Db, accountId: string, keys: string[] | undefined): Promise<string | null> {
  if (keys === undefined) return null;
  if (keys.length === 0) throw badRequest("waitlists must name at least one waitlist key (leave it out for all of the account's)");
  const { waitlists } = db.t;
  const owned = await db.select({ id: waitlists.id, key: waitlists.key }).from(waitlists).where(and(eq(waitlists.accountId, accountId), inArray(waitlists.key, keys)));
  const missing = keys.find((k) => !owned.some((w) => w.key === k));
  if (missing !== undefined) throw badRequest(`waitlists: no waitlist of this account has the key "${missing}"`);
  return [...new Set(owned.map((w) => w.id))].join(",");
}

export async function createAccountKey(db: Db, accountId: string, name: string, limits: KeyLimits = {}) {
  const apiKey = newAccountKey();
  const scopes = scopesOf(limits.scopes);
  const waitlistIds = await waitlistIdsOf(db, accountId, limits.waitlists);
  const row = { id: `key_${token(20)}`, accountId, name: checkKeyName(name), hash: sha256Hex(apiKey), createdAt: now(), scopes, waitlistIds, createdBy: limits.createdBy ?? null, prefix: keyPrefix(apiKey) };
  setTarget(`account/keys/${row.id}`);
  await db.tx((tx) => tx.insert(tx.t.apiKeys).values(row));
  return {
    id: row.id,
    name: row.name,
    api_key: apiKey,
    prefix: row.prefix,
    scopes: scopeList(scopes),
    waitlists: limits.waitlists ? [...new Set(limits.waitlists)] : null,
    created_at: row.createdAt,
  };
}

/** Issue 48: every key of the account that works, without its secret: account keys and per-waitlist keys. */
export async function listKeys(db: Db, accountId: string) {
  const rows = await db.rows<{ id: string; name: string; prefix: string | null; scopes: string; waitlist_id: string | null; waitlist_ids: string | null; created_by: string | null; created_at: number; last_used_at: number | null }>(
    sql`SELECT id, name, prefix, scopes, waitlist_id, waitlist_ids, created_by, created_at, last_used_at FROM api_keys
      WHERE account_id = ${accountId} AND revoked_at IS NULL ORDER BY created_at, id`,
  );
  const keyOf = new Map((await db.rows<{ id: string; key: string }>(sql`SELECT id, key FROM waitlists WHERE account_id = ${accountId}`)).map((w) => [w.id, w.key]));
  return rows.map((r) => {
    const ids = r.waitlist_id ? [r.waitlist_id] : r.waitlist_ids ? r.waitlist_ids.split(",") : null;
    return {
      id: r.id,
      name: r.name,
      kind: r.waitlist_id ? ("waitlist" as const) : ("account" as const),
      prefix: r.prefix ?? (r.waitlist_id ? "wl_" : "wl_acct_"),
      scopes: scopeList(r.scopes),
      // a waitlist deleted since is no longer named
      waitlists: ids ? ids.flatMap((id) => (keyOf.has(id) ? [keyOf.get(id)!] : [])) : null,
      created_by: r.created_by,
      created_at: Number(r.created_at),
      last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
    };
  });
}

export async function createAccountKeyFor(db: Db, username: string, name: string) {
  const account = await accountByUsername(db, username);
  return createAccountKey(db, account.id, name);
}

/**
 * Revokes an account or per-waitlist key; `accountId` limits it to that account's keys (HTTP), `madeBy` to the keys a
 * user made (an admin's: issue 48, others' keys need an owner).
 */
export async function revokeKey(db: Db, id: string, accountId?: string, madeBy?: string) {
  const { apiKeys } = db.t;
  if (madeBy !== undefined) {
    const [key] = await db.select({ createdBy: apiKeys.createdBy }).from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt), accountId ? eq(apiKeys.accountId, accountId) : undefined));
    if (key && key.createdBy !== madeBy) throw forbidden("needs role owner to revoke a key someone else made");
  }
  const revoked = await db.tx((tx) =>
    tx
      .update(apiKeys)
      .set({ revokedAt: now() })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt), accountId ? eq(apiKeys.accountId, accountId) : undefined))
      .returning({ id: apiKeys.id }),
  );
  if (revoked.length === 0) throw notFound(`no active key with id "${id}"`);
  return { id, revoked: true };
}

/**
 * Creates or regenerates a waitlist's key: the old one stops working in the same transaction. The waitlist row is
 * locked first, so of two concurrent regenerations the second revokes the first's key (PostgreSQL; SQLite has one writer).
 */
export async function regenerateWaitlistKey(db: Db, waitlist: { id: string; accountId: string }, createdBy: string | null = null) {
  const apiKey = newWaitlistKey();
  const at = now();
  const id = `key_${token(20)}`;
  await db.write([
    sql`SELECT 1 FROM waitlists WHERE id = ${waitlist.id}${db.d.forUpdate}`,
    sql`UPDATE api_keys SET revoked_at = ${at} WHERE waitlist_id = ${waitlist.id} AND revoked_at IS NULL`,
    sql`INSERT INTO api_keys (id, account_id, waitlist_id, name, hash, created_at, prefix, created_by)
      VALUES (${id}, ${waitlist.accountId}, ${waitlist.id}, 'waitlist', ${sha256Hex(apiKey)}, ${at}, ${keyPrefix(apiKey)}, ${createdBy})`,
  ]);
  return { id, api_key: apiKey, created_at: at };
}

export async function regenerateWaitlistKeyFor(db: Db, waitlistRef: string) {
  const { waitlists } = db.t;
  const [waitlist] = await db.select({ id: waitlists.id, accountId: waitlists.accountId }).from(waitlists).where(eq(waitlists.key, waitlistRef.trim()));
  if (!waitlist) throw notFound(`no waitlist with key "${waitlistRef.trim()}"`);
  return regenerateWaitlistKey(db, waitlist);
}

/** How many waitlists an account owns. */
export async function waitlistCount(db: Db, accountId: string): Promise<number> {
  const [{ owned }] = await db.rows<{ owned: number }>(sql`SELECT count(*) AS owned FROM waitlists WHERE account_id = ${accountId}`);
  return Number(owned);
}

/** spec: Account view. `last_used_at` is the previous call's time, read before this call's touch. */
export function accountView(auth: Auth, owned: number) {
  const plan = planOf(auth.account.plan);
  return {
    account: { id: auth.account.id, username: auth.account.username },
    plan: { name: plan.name, api_access: plan.apiAccess },
    waitlists: { count: owned, max: plan.maxWaitlists, can_create: canCreateWaitlist(plan.maxWaitlists, owned) },
    ai_credits: { remaining: plan.hasAi ? auth.account.aiCredits : 0 },
    api_key: { name: auth.key.name, created_at: auth.key.createdAt, last_used_at: auth.key.lastUsedAt },
  };
}

/** spec: the first waitlist is always allowed. */
export const canCreateWaitlist = (max: number | "unlimited", owned: number) => max === "unlimited" || owned === 0 || owned < max;

