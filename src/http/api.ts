// The `api` route option: key auth, rate limit, plan gate and body checks, all before the body is validated.
import { Elysia } from "elysia";
import type { Server } from "bun";
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { sha256Hex, now } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { PlanId, Role } from "../db/schema";
import { rank, sessionByToken, type SessionRow } from "../users/service";
import { requiredRole } from "../users/roles";
import { isGrowthOrHigher, planOf, UNAUTHENTICATED_LIMIT, type Bucket } from "../account/plans";
import { AppError, forbidden, unauthorized, type ErrorShape } from "./errors";
import { countAndDecide, rateHeaders, uncounted, type RateDecision } from "./rate-limit";
import { clientIp } from "./client-ip";
import { parseCappedBody, readBodyText, streamsBody } from "./body-limit";
import { readCache } from "../db/read-cache";
import { waitlistRows, type Waitlist } from "../waitlists/rows";
import { ACTIONS } from "../audit/actions";
import { expectAudit, outsideScopes, type Actor, type AuditEntry } from "../audit/scope";
import { maskEmail } from "../log";

export type { Waitlist } from "../waitlists/rows";

export interface Auth {
  /** Issue 48: the signed-in user of a dashboard session; null for an API key. */
  user: { id: string; email: string; name: string | null; role: Role; sessionId: string; csrf: string } | null;
  /** The API key; for a session, the user (their id and name) with a key's full power. */
  key: {
    id: string;
    name: string;
    createdAt: number;
    lastUsedAt: number | null;
    isWaitlistKey: boolean;
    /** Issue 48: false for a read-only key (scope read). */
    canWrite: boolean;
    /** Issue 48: the waitlists (ids) an account key is limited to; null: all of the account's. */
    waitlistIds: string[] | null;
  };
  account: { id: string; username: string; plan: PlanId; aiCredits: number };
  /** The waitlist named by the path's `{waitlistKey}`, owned by the key; null on account routes. */
  waitlist: Waitlist | null;
}

export interface Policy {
  /**
   * `account`: account keys only (401 for a per-waitlist key). `any`: either kind. `user`: a signed-in user's own
   * (their sessions, their second factor): 403 for a key. A dashboard session passes `account` and `any` too.
   * `none`: before anyone is signed in (a sign-in, a link's password): no key or session, the IP's rate limit.
   */
  key: "account" | "any" | "user" | "none";
  bucket: Bucket;
  /** Account keys below this plan get 403; per-waitlist keys always need Growth (DESIGN §3). */
  minPlan?: "growth";
  errors?: ErrorShape;
  /** A landing-page endpoint: LANDING_PAGE_API=off answers 503 (after the key is checked). */
  landing?: true;
  /**
   * An account route a key limited to named waitlists may call (issue 48: GET /me, the list of waitlists); on the
   * others (keys, the audit log, a new waitlist) such a key is 403. Routes naming a waitlist check it is one of its.
   */
  limitedKeys?: true;
}

/** One row of the key lookup (the waitlist's id and version only when the path names a waitlist). */
interface LookupRow {
  keyId: string;
  keyName: string;
  keyCreatedAt: number;
  keyLastUsedAt: number | null;
  keyWaitlistId: string | null;
  keyScopes: string;
  keyWaitlistIds: string | null;
  accountId: string;
  username: string;
  plan: PlanId;
  aiCredits: number;
  waitlistId?: string | null;
  waitlistVersion?: number | null;
}

/** Where the guard leaves a route's policy in its `detail`, for the OpenAPI document (docs/openapi.ts). */
export const POLICY_EXTENSION = "x-api-policy";

/** Every status the guard itself can answer on a route with this policy, before the handler runs. */
export function guardStatuses(policy: Policy, method: string): number[] {
  // 403: a read-only key's write, a key limited to other waitlists (issue 48)
  const statuses = policy.key === "none" ? [429] : [401, 403, 429];
  // a body that is not a JSON object, arrives too slowly, or is over 1 MB (onParse below)
  if (method !== "GET" && method !== "HEAD") statuses.push(400, 408, 413);
  if (policy.landing) statuses.push(503);
  return statuses;
}

/** What a request's error handler needs to know about the route that failed. */
export const ERROR_SHAPE = Symbol("errorShape");
const AUTH = Symbol("auth");

/** What authentication reads of a request's context. */
interface RequestParts {
  request: Request;
  /** The route's path pattern (what ACTIONS names). */
  route?: string;
  params?: Record<string, string>;
  set: { headers: Record<string, string | number> };
  server: Server<unknown> | null | undefined;
}

/** Request bodies on /api are JSON whatever the Content-Type; problems are judged after authentication. */
class BodyProblem {
  constructor(
    readonly message: string,
    readonly status: 400 | 408 | 413 = 400,
  ) {}
}

export { BODY_DEADLINE_MS } from "./body-limit";
const EMPTY_BODY = Object.freeze({ empty: true });
const BODY_PROBLEMS = { 400: "bad_request", 408: "request_timeout", 413: "payload_too_large" } as const;

export function apiGuard(deps: { db: Db; config: Config }) {
  const { db, config } = deps;

  const touchKey = (keyId: string, at: number): SQL => sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${keyId}`;

  // With rate limits off there is no counter write to ride along with, so last_used_at writes are
  // coalesced: one transaction per 100 ms for every key used meanwhile (still ahead of the next call).
  const touches = new Map<string, number>();
  let flushing: Timer | null = null;
  const flushTouches = () => {
    flushing = null;
    // in key order, so two instances flushing at once lock the rows in the same order (no deadlock on PostgreSQL)
    const batch = [...touches].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, at]) => touchKey(id, at));
    touches.clear();
    if (batch.length) void db.write(batch).catch(() => {});
  };

  async function rateLimit(subject: string, limit: number, touch?: { keyId: string; at: number }): Promise<RateDecision> {
    if (!config.rateLimits) {
      if (touch) {
        touches.set(touch.keyId, touch.at);
        // outside the request's scope: the coalesced write is no request's change (audit/scope.ts)
        flushing ??= outsideScopes(() => setTimeout(flushTouches, 100));
      }
      return uncounted(limit, now());
    }
    return countAndDecide(db, subject, limit, touch ? [touchKey(touch.keyId, touch.at)] : []);
  }

  /**
   * Built once, executed with placeholders: the auth lookup runs on every API request. Named, so that PostgreSQL
   * keeps it prepared on each connection (SQLite's prepare takes no name and ignores it).
   */
  function lookupQuery(withWaitlist: boolean): { execute(values: Record<string, string>): Promise<LookupRow[]> } {
    const { accounts, apiKeys, waitlists } = db.t;
    const q = db
      .select({
        keyId: apiKeys.id,
        keyName: apiKeys.name,
        keyCreatedAt: apiKeys.createdAt,
        keyLastUsedAt: apiKeys.lastUsedAt,
        keyWaitlistId: apiKeys.waitlistId,
        keyScopes: apiKeys.scopes,
        keyWaitlistIds: apiKeys.waitlistIds,
        accountId: accounts.id,
        username: accounts.username,
        plan: accounts.plan,
        aiCredits: accounts.aiCredits,
        ...(withWaitlist ? { waitlistId: waitlists.id, waitlistVersion: waitlists.version } : {}),
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId));
    const joined = withWaitlist ? q.leftJoin(waitlists, eq(waitlists.key, sql.placeholder("waitlistKey"))) : q;
    const query = joined.where(and(eq(apiKeys.hash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)));
    return (query as unknown as { prepare(name: string): { execute(values: Record<string, string>): Promise<LookupRow[]> } }).prepare(withWaitlist ? "auth_key_waitlist" : "auth_key");
  }
  const byKey = lookupQuery(false);
  const byKeyAndWaitlist = lookupQuery(true);

  // issue 19: a key's row is read again only after something was committed (a revoke, a plan change, anywhere);
  // unknown keys are not kept, so a made-up key costs a lookup (and, with rate limits on, its IP's counter)
  const lookups = readCache<string, LookupRow | undefined>(db, {
    max: 10_000,
    keep: (row) => row !== undefined,
    // a sign-up, a view or a rate counter writes none of them (its triggers move the waitlist's counters, not its version)
    tables: ["api_keys", "accounts", "waitlists"],
  });
  function lookup(hash: string, waitlistKey: string | undefined): Promise<LookupRow | undefined> {
    return lookups.get(waitlistKey === undefined ? hash : `${hash}\0${waitlistKey}`, async () => {
      const [row] = await (waitlistKey === undefined ? byKey.execute({ hash }) : byKeyAndWaitlist.execute({ hash, waitlistKey }));
      return row;
    });
  }

  // the waitlist rows of recent requests, each good while its version (read with the key on every request) is unchanged
  const waitlists = waitlistRows(db);

  // issue 48: a session's row is read again only after a commit that may change it (a revocation, a role)
  const sessions = readCache<string, SessionRow | undefined>(db, { max: 10_000, keep: (row) => row !== undefined, tables: ["sessions", "users", "accounts"] });
  const byWaitlistKey = readCache<string, { id: string; version: number } | undefined>(db, { max: 10_000, keep: (row) => row !== undefined, tables: ["waitlists"] });

  async function authenticateSession(ctx: RequestParts, policy: Policy, cookie: string): Promise<Auth> {
    const row = await sessions.get(sha256Hex(cookie), () => sessionByToken(db, cookie));
    // a cached row outlives its expiry while nothing it depends on is written: checked each time
    if (!row || row.expires_at <= now()) throw unauthorized("Your session has ended (signed out, revoked or expired): sign in again");
    const d = await rateLimit(`user:${row.user_id}:${policy.bucket}`, planOf(row.plan).limits[policy.bucket]);
    Object.assign(ctx.set.headers, rateHeaders(d));
    if (!d.allowed) throw tooMany(d);
    const method = ctx.request.method;
    // a cookie rides along with any site's form or fetch: a change needs the token only the dashboard's page holds
    if (method !== "GET" && method !== "HEAD" && ctx.request.headers.get("x-csrf-token") !== row.csrf) {
      throw forbidden("CSRF token missing or wrong: send the X-CSRF-Token header the sign-in answered (GET /api/v1/session)");
    }
    const needed = ctx.route === undefined ? "owner" : requiredRole(method, ctx.route);
    if (rank(row.role) < rank(needed)) throw forbidden(`needs role ${needed}; you are ${row.role}`);
    let waitlist: Waitlist | null = null;
    if (ctx.params?.waitlistKey !== undefined) {
      const key = ctx.params.waitlistKey;
      const found = await byWaitlistKey.get(key, async () => (await db.rows<{ id: string; version: number }>(sql`SELECT id, version FROM waitlists WHERE key = ${key}`))[0]);
      waitlist = found ? await waitlists.at(found.id, Number(found.version)) : null;
      if (!waitlist || waitlist.accountId !== row.account_id) throw unauthorized("Invalid waitlist key");
    }
    if (policy.minPlan === "growth" && !isGrowthOrHigher(row.plan)) throw forbidden(`This endpoint needs the Growth plan or higher; this account is on ${planOf(row.plan).name}`);
    if (policy.landing && !config.landingPageApi) throw new AppError("unavailable", "The landing-page API is temporarily disabled on this server (LANDING_PAGE_API=off)");
    const name = row.name ?? row.email;
    const action = ctx.route === undefined ? undefined : ACTIONS[`${method} ${ctx.route}`];
    if (action) expectAudit(auditEntry(ctx, row.account_id, { type: "user", id: row.user_id, name }, action));
    return {
      user: { id: row.user_id, email: row.email, name: row.name, role: row.role, sessionId: row.public_id, csrf: row.csrf },
      key: { id: row.user_id, name, createdAt: 0, lastUsedAt: null, isWaitlistKey: false, canWrite: true, waitlistIds: null },
      account: { id: row.account_id, username: row.username, plan: row.plan, aiCredits: row.ai_credits },
      waitlist,
    };
  }

  function auditEntry(ctx: RequestParts, accountId: string, actor: Actor, action: string): AuditEntry {
    const agent = ctx.request.headers.get("user-agent");
    return {
      accountId,
      actor,
      action,
      target: targetOf(ctx.route!, ctx.params ?? {}),
      ip: clientIp(ctx.request, ctx.server, config.trustProxy),
      userAgent: agent ? agent.slice(0, USER_AGENT_MAX) : null,
    };
  }

  /** A route before anyone is signed in: the IP's rate limit, no one's auth. */
  async function limitByIp(ctx: Omit<RequestParts, "params">, policy: Policy): Promise<null> {
    const d = await rateLimit(`ip:${clientIp(ctx.request, ctx.server, config.trustProxy)}:${policy.bucket}`, UNAUTHENTICATED_LIMIT);
    Object.assign(ctx.set.headers, rateHeaders(d));
    if (!d.allowed) throw tooMany(d);
    return null;
  }

  async function authenticate(ctx: RequestParts, policy: Policy): Promise<Auth> {
    const presented = ctx.request.headers.get("x-api-key")?.trim() || basicPassword(ctx.request.headers.get("authorization"));
    if (!presented) {
      const cookie = sessionCookie(ctx.request);
      if (cookie) return authenticateSession(ctx, policy, cookie);
    }
    const row = presented ? await lookup(sha256Hex(presented), ctx.params?.waitlistKey) : undefined;
    if (!row) {
      const ip = clientIp(ctx.request, ctx.server, config.trustProxy);
      const d = await rateLimit(`ip:${ip}:unauthenticated`, UNAUTHENTICATED_LIMIT);
      Object.assign(ctx.set.headers, rateHeaders(d));
      if (!d.allowed) throw tooMany(d);
      // spec: unknown and revoked keys get the identical 401
      throw unauthorized(presented ? "Invalid API key" : "Missing API key: send it in the X-Api-Key header");
    }
    const isWaitlistKey = row.keyWaitlistId !== null;
    const d = await rateLimit(`key:${row.keyId}:${policy.bucket}`, planOf(row.plan).limits[policy.bucket], { keyId: row.keyId, at: now() });
    Object.assign(ctx.set.headers, rateHeaders(d));
    if (!d.allowed) throw tooMany(d);

    if (policy.key === "user") throw forbidden("This endpoint is a signed-in user's own: sign in to the dashboard (an API key has no user)");
    if (isWaitlistKey && policy.key === "account") throw unauthorized("This endpoint needs an account key (wl_acct_...); per-waitlist keys are not accepted");
    let waitlist: Waitlist | null = null;
    if (row.waitlistId !== undefined) {
      waitlist = row.waitlistId ? await waitlists.at(row.waitlistId, row.waitlistVersion!) : null;
      const owned = waitlist !== null && (isWaitlistKey ? waitlist.id === row.keyWaitlistId : waitlist.accountId === row.accountId);
      if (!owned) throw unauthorized("Invalid waitlist key");
    }
    if (isWaitlistKey && !isGrowthOrHigher(row.plan)) throw forbidden(`Per-waitlist API keys need the Growth plan or higher; this account is on ${planOf(row.plan).name}`);
    if (policy.minPlan === "growth" && !isGrowthOrHigher(row.plan)) throw forbidden(`This endpoint needs the Growth plan or higher; this account is on ${planOf(row.plan).name}`);
    const method = ctx.request.method;
    const canWrite = row.keyScopes.split(",").includes("write");
    if (!canWrite && method !== "GET" && method !== "HEAD") throw forbidden("This key is read-only (scope read): changes need a key with scope write");
    const waitlistIds = row.keyWaitlistIds ? row.keyWaitlistIds.split(",") : null;
    if (waitlistIds) {
      if (waitlist ? !waitlistIds.includes(waitlist.id) : !policy.limitedKeys) {
        throw forbidden(waitlist ? "This key is limited to other waitlists" : "This key is limited to named waitlists; this endpoint needs a key for the whole account");
      }
    }
    if (policy.landing && !config.landingPageApi) throw new AppError("unavailable", "The landing-page API is temporarily disabled on this server (LANDING_PAGE_API=off)");

    const action = ctx.route === undefined ? undefined : ACTIONS[`${method} ${ctx.route}`];
    if (action) expectAudit(auditEntry(ctx, row.accountId, { type: "key", id: row.keyId, name: row.keyName }, action));
    return {
      user: null,
      key: { id: row.keyId, name: row.keyName, createdAt: row.keyCreatedAt, lastUsedAt: row.keyLastUsedAt, isWaitlistKey, canWrite, waitlistIds },
      account: { id: row.accountId, username: row.username, plan: row.plan, aiCredits: row.aiCredits },
      waitlist,
    };
  }

  return new Elysia({ name: "http/api" })
    .onParse({ as: "global" }, async ({ request, path }) => {
      // issue 16: every body is read through the byte cap; outside /api a problem is answered at once (the error handler)
      if (!path.startsWith("/api/")) return parseCappedBody(request);
      // issue 47: an import's CSV is read by its route as it arrives
      if (streamsBody(request.method, path)) return EMPTY_BODY;
      let text: string;
      try {
        text = await readBodyText(request);
      } catch (err) {
        if (err instanceof AppError && (err.status === 408 || err.status === 413)) return new BodyProblem(err.message, err.status);
        throw err;
      }
      if (text.trim() === "") return EMPTY_BODY;
      try {
        const value = JSON.parse(text);
        if (value === null || typeof value !== "object" || Array.isArray(value)) return new BodyProblem("Request body must be a JSON object");
        const reserved = reservedKey(value);
        if (reserved === NUL) return new BodyProblem("Request body holds a NUL character (\\u0000), which no text may contain");
        return reserved ? new BodyProblem(`Request body uses the reserved key "${reserved}", which no field may have`) : value;
      } catch {
        return new BodyProblem("Request body is not valid JSON");
      }
    })
    .macro({
      api: (policy: Policy) => ({
        async transform(ctx: any) {
          ctx[ERROR_SHAPE] = policy.errors ?? "standard";
          // the parts it reads, not the context: Elysia compiles each route for what its hooks read, and a context passed
          // whole reads as "everything" (every API request had its headers copied and its cookies parsed, ~2 us)
          ctx[AUTH] =
            policy.key === "none"
              ? await limitByIp({ request: ctx.request, set: ctx.set, server: ctx.server }, policy)
              : await authenticate({ request: ctx.request, route: ctx.route, params: ctx.params, set: ctx.set, server: ctx.server }, policy);
          if (ctx.body === EMPTY_BODY) ctx.body = undefined;
          else if (ctx.body instanceof BodyProblem) throw new AppError(BODY_PROBLEMS[(ctx.body as BodyProblem).status], ctx.body.message);
          // a NUL in a query parameter reaches SQL as text, which PostgreSQL cannot hold (the fuzz test found a 500)
          for (const [name, value] of Object.entries(ctx.query ?? {})) {
            if (String(value).includes(NUL)) throw new AppError("bad_request", `${name} must not contain a NUL character (\\u0000)`);
          }
        },
        resolve: (ctx: any) => ({ auth: ctx[AUTH] as Auth }),
        // documents bodies as JSON; the global parser above has already read them
        parse: "json" as never,
        // a key, or the dashboard's session cookie (issue 48); a user's own endpoints take only the latter
        detail: { security: securityOf(policy), [POLICY_EXTENSION]: policy },
      }),
    });
}

const NUL = "\0";

const securityOf = (policy: Policy): Record<string, string[]>[] =>
  policy.key === "none" ? [] : policy.key === "user" ? [{ Session: [] }] : [{ ApiKey: [] }, { Session: [] }];

/** Issue 48: the dashboard session's cookie. */
export const SESSION_COOKIE = "wl_session";

function sessionCookie(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const USER_AGENT_MAX = 256;

/** The change's target as its path names it, past /api/v1/; an email in it masked (issue 48: never a full email). */
function targetOf(route: string, params: Record<string, string>): string {
  return route.replace(/^\/api\/v1\//, "").replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name] ?? "";
    return value.includes("@") ? maskEmail(value) : value;
  });
}

/**
 * The password of HTTP Basic authentication, for senders that can set no header of their own but take credentials in
 * the URL (Amazon SNS: https://x:KEY@host/...); the user name is ignored.
 */
function basicPassword(header: string | null): string | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const at = decoded.indexOf(":");
  return at >= 0 ? decoded.slice(at + 1).trim() || undefined : undefined;
}

/**
 * A JSON object with its own `toString` or `valueOf` cannot be turned into text, which validation
 * messages do (the fuzz tests found a 500 there): such a key is refused wherever it is nested. A NUL
 * character in any key or string (returned as NUL) is refused too: PostgreSQL's text cannot hold one.
 */
function reservedKey(root: object): string | null {
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (value === null || typeof value !== "object") continue;
    if (!Array.isArray(value)) for (const key of ["toString", "valueOf"]) if (Object.hasOwn(value, key)) return key;
    for (const [key, child] of Object.entries(value)) {
      if (key.includes(NUL) || (typeof child === "string" && child.includes(NUL))) return NUL;
      if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return null;
}

function tooMany(d: RateDecision): AppError {
  return new AppError("rate_limited", `Rate limit exceeded: ${d.limit} requests per minute. Retry in ${d.retryAfter} s.`, { retry_after: d.retryAfter });
}
