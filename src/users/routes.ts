// Issue 48 over HTTP: sign-in and sign-out with a session cookie, the single-use links (accept an invitation, reset a
// password), a user's own second factor, and the account's users and sessions.
import { Elysia, t } from "elysia";
import { sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { SESSION_COOKIE, type apiGuard, type Auth } from "../http/api";
import { clientIp } from "../http/client-ip";
import { errorResponses } from "../http/error-schemas";
import { EMAIL_PATTERN, Matching, Text } from "../http/schema";
import type { Dispatcher } from "../outbox/dispatcher";
import {
  confirmTotp,
  createUser,
  deleteUser,
  disableTotp,
  linkUrl,
  listSessions,
  listUsers,
  resetToken,
  revokeSession,
  SESSION_MS,
  signIn,
  startTotp,
  updateUser,
  usePasswordLink,
  userById,
  userView,
  type StartedSession,
} from "./service";
import { PASSWORD_MAX } from "./passwords";

const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("editor"), t.Literal("viewer")], { description: "owner: everything; admin: all but users and others' keys; editor: subscribers, tags, pages, broadcasts; viewer: reads" });
const User = t.Object({
  id: t.String(),
  email: t.String(),
  name: t.Union([t.String(), t.Null()]),
  role: t.String({ description: "owner, admin, editor or viewer" }),
  totp: t.Boolean({ description: "Two-factor sign-in is on" }),
  active: t.Boolean({ description: "false until the invitation is accepted (a password set)" }),
  created_at: t.Number(),
});
const SessionAnswer = t.Object({
  success: t.Boolean(),
  data: t.Object({
    user: User,
    account: t.Object({ id: t.String(), username: t.String() }),
    csrf_token: t.String({ description: "Send it back as X-CSRF-Token on every request that changes something" }),
    expires_at: t.Optional(t.Number()),
  }),
});
const Email = Matching(EMAIL_PATTERN, { maxLength: 254, error: "must be a valid email address" });
const Password = t.String({ maxLength: PASSWORD_MAX, description: "At least 10 characters, not one of the most common passwords" });
const Session = t.Object({ id: t.String(), user_id: t.String(), user_email: t.String(), created_at: t.Number(), expires_at: t.Number(), ip: t.Union([t.String(), t.Null()]), user_agent: t.Union([t.String(), t.Null()]) });

export function userRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatcher: Pick<Dispatcher, "sendNow"> }) {
  const { db, config } = deps;
  const secure = config.baseUrl.startsWith("https:");
  const cookie = (value: string, maxAgeS: number) => `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
  const client = (request: Request, server: Parameters<typeof clientIp>[1]) => ({ ip: clientIp(request, server, config.trustProxy), userAgent: request.headers.get("user-agent") });
  const answer = async (s: StartedSession, set: { headers: Record<string, unknown> }) => {
    set.headers["set-cookie"] = cookie(s.token, Math.floor(SESSION_MS / 1000));
    const [account] = await db.rows<{ id: string; username: string }>(sql`SELECT id, username FROM accounts WHERE id = ${s.user.account_id}`);
    return { success: true, data: { user: userView(s.user), account: account!, csrf_token: s.csrf, expires_at: s.expiresAt } };
  };
  const me = async (auth: Auth) => (await userById(db, auth.user!.id))!;
  const publicRoute = { detail: { tags: ["Team"] } };
  const nonePolicy = { key: "none", bucket: "account" } as const;
  const userPolicy = { key: "user", bucket: "account" } as const;
  const accountPolicy = { key: "account", bucket: "account" } as const;

  return new Elysia({ name: "users/routes", prefix: "/api/v1" })
    .use(deps.api)
    .post("/session", async ({ body, request, server, set }) => answer(await signIn(db, body, client(request, server)), set), {
      api: nonePolicy,
      body: t.Object({ email: Email, password: t.String({ maxLength: PASSWORD_MAX }), totp_code: t.Optional(t.String({ maxLength: 32, description: "The authenticator's 6 digits, or a recovery code" })) }, { additionalProperties: false }),
      response: { 200: SessionAnswer, ...errorResponses(400, 401, 429) },
      detail: {
        ...publicRoute.detail,
        summary: "Sign in",
        description:
          "Issue 48: email and password (and the authenticator's code when two-factor sign-in is on: without it the 401 carries totp_required). Sets the session cookie (HttpOnly, SameSite=Lax, Secure on https) and answers the CSRF token. More than 10 failures for one address or one IP within 15 minutes answer 429 with Retry-After.",
      },
    })
    .get("/session", async ({ auth }) => ({ success: true, data: { user: userView(await me(auth)), account: { id: auth.account.id, username: auth.account.username }, csrf_token: auth.user!.csrf } }), {
      api: userPolicy,
      response: { 200: SessionAnswer, ...errorResponses(401, 403, 429) },
      detail: { tags: ["Team"], summary: "The signed-in user", description: "The session cookie's user, account and CSRF token." },
    })
    .delete(
      "/session",
      async ({ auth, set }) => {
        await revokeSession(db, auth.account.id, auth.user!.sessionId, auth.user!.id);
        set.headers["set-cookie"] = cookie("", 0);
        return { success: true, message: "Signed out" };
      },
      { api: userPolicy, response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 429) }, detail: { tags: ["Team"], summary: "Sign out" } },
    )
    .post("/session/password", async ({ body, request, server, set }) => answer(await usePasswordLink(db, body.token, body.password, client(request, server), body.name), set), {
      api: nonePolicy,
      body: t.Object({ token: Text({ maxLength: 100 }), password: Password, name: t.Optional(Text({ maxLength: 100 })) }, { additionalProperties: false }),
      response: { 200: SessionAnswer, ...errorResponses(400, 429) },
      detail: {
        ...publicRoute.detail,
        summary: "Set a password by a link",
        description: "The token of an invitation (7 days) or a password reset (1 hour), used once: sets the password and signs in. A reset signs every other session of the user out.",
      },
    })
    .post(
      "/session/reset",
      async ({ body, set }) => {
        const found = await resetToken(db, body.email);
        if (found) {
          const url = linkUrl(config.baseUrl, "reset", found.token);
          await deps.dispatcher
            .sendNow({ to: found.user.email, subject: "Reset your Waitlist password", text: `Someone asked to reset the password of ${found.user.email} on ${config.baseUrl}.\n\nSet a new one within an hour: ${url}\n\nIf it was not you, ignore this email: your password stays as it is.` })
            .catch(() => false);
        }
        set.status = 202;
        // the same answer whether or not the address has a user
        return { success: true, message: "If the address has a user, a link to set a new password is on its way (valid 1 hour)" };
      },
      {
        api: nonePolicy,
        body: t.Object({ email: Email }, { additionalProperties: false }),
        response: { 202: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(400, 429) },
        detail: { ...publicRoute.detail, summary: "Ask for a password reset link", description: "Emails a single-use link (1 hour) to the address if it has a user; answers the same either way." },
      },
    )
    .post("/session/totp", async ({ auth }) => ({ success: true, data: await startTotp(db, await me(auth)) }), {
      api: userPolicy,
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ secret: t.String(), otpauth_url: t.String() }) }), ...errorResponses(401, 403, 409, 429) },
      detail: { tags: ["Team"], summary: "Set up two-factor sign-in", description: "A new TOTP secret (base32) and its otpauth:// URI for an authenticator app; on once a code is confirmed." },
    })
    .post("/session/totp/confirm", async ({ auth, body }) => ({ success: true, data: await confirmTotp(db, await me(auth), body.code) }), {
      api: userPolicy,
      body: t.Object({ code: Text({ maxLength: 12 }) }, { additionalProperties: false }),
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ recovery_codes: t.Array(t.String()) }) }), ...errorResponses(400, 401, 403, 409, 429) },
      detail: { tags: ["Team"], summary: "Turn two-factor sign-in on", description: "With the authenticator's current code; answers 10 single-use recovery codes, shown this once." },
    })
    .delete("/session/totp", async ({ auth, body }) => disableTotp(db, await me(auth), body.password), {
      api: userPolicy,
      body: t.Object({ password: t.String({ maxLength: PASSWORD_MAX }) }, { additionalProperties: false }),
      response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(400, 401, 403, 429) },
      detail: { tags: ["Team"], summary: "Turn two-factor sign-in off", description: "With the user's password." },
    })
    .get("/account/users", async ({ auth }) => ({ success: true, data: { users: await listUsers(db, auth.account.id) } }), {
      api: accountPolicy,
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ users: t.Array(User) }) }), ...errorResponses(401, 403, 429) },
      detail: { tags: ["Team"], summary: "List users", description: "The account's users and their roles (admin or owner)." },
    })
    .post(
      "/account/users",
      async ({ auth, body, set }) => {
        const made = await createUser(db, auth.account.id, body);
        const url = linkUrl(config.baseUrl, "invite", made.token);
        const inviter = auth.user ? (auth.user.name ?? auth.user.email) : "Your team";
        const emailed = await deps.dispatcher
          .sendNow({
            to: made.user.email,
            subject: `${inviter} invited you to ${auth.account.username}'s waitlists`,
            text: `${inviter} invited you to run ${auth.account.username}'s waitlists as ${made.user.role}.\n\nSet your password within 7 days: ${url}\n\nThe link works once.`,
          })
          .catch(() => false);
        set.status = 201;
        return { success: true, data: { user: made.user, invite_url: url, expires_at: made.expiresAt, emailed } };
      },
      {
        api: accountPolicy,
        body: t.Object({ email: Email, role: Role, name: t.Optional(Text({ maxLength: 100 })) }, { additionalProperties: false }),
        response: {
          201: t.Object({
            success: t.Boolean(),
            data: t.Object({ user: User, invite_url: t.String({ description: "The single-use link (7 days), also emailed" }), expires_at: t.Number(), emailed: t.Boolean() }),
          }),
          ...errorResponses(400, 401, 403, 409, 429),
        },
        detail: { tags: ["Team"], summary: "Invite a user", description: "Owner only. Emails a single-use link (7 days) where they set a password; the link is in the answer too." },
      },
    )
    .patch("/account/users/:id", async ({ auth, params, body }) => ({ success: true, data: { user: await updateUser(db, auth.account.id, params.id, body) } }), {
      api: accountPolicy,
      params: t.Object({ id: t.String() }),
      body: t.Object({ role: t.Optional(Role), name: t.Optional(t.Union([Text({ maxLength: 100 }), t.Null()])) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ user: User }) }), ...errorResponses(400, 401, 403, 404, 409, 429) },
      detail: { tags: ["Team"], summary: "Change a user's role or name", description: "Owner only; the last owner stays owner (409)." },
    })
    .delete("/account/users/:id", async ({ auth, params }) => deleteUser(db, auth.account.id, params.id), {
      api: accountPolicy,
      params: t.Object({ id: t.String() }),
      response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 409, 429) },
      detail: { tags: ["Team"], summary: "Remove a user", description: "Owner only; their sessions end with them. The last owner can't be removed (409)." },
    })
    .get("/account/sessions", async ({ auth, query }) => {
      // a user sees their own; an owner (or an API key) anyone's
      const only = auth.user && auth.user.role !== "owner" ? auth.user.id : query.user_id;
      return { success: true, data: { sessions: await listSessions(db, auth.account.id, only) } };
    }, {
      api: { key: "account", bucket: "account" },
      query: t.Object({ user_id: t.Optional(t.String({ description: "One user's sessions (an owner's choice)" })) }, { additionalProperties: false }),
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ sessions: t.Array(Session) }) }), ...errorResponses(401, 403, 429) },
      detail: { tags: ["Team"], summary: "List sessions", description: "Dashboard sessions that work: a user's own, or (an owner) everyone's." },
    })
    .delete(
      "/account/sessions/:id",
      async ({ auth, params }) => {
        const onlyOwn = auth.user && auth.user.role !== "owner" ? auth.user.id : undefined;
        return revokeSession(db, auth.account.id, params.id, onlyOwn);
      },
      {
        api: { key: "account", bucket: "account" },
        params: t.Object({ id: t.String() }),
        response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 429) },
        detail: { tags: ["Team"], summary: "Revoke a session", description: "A user revokes their own; an owner anyone's. Its next request is refused, on every instance." },
      },
    );
}
