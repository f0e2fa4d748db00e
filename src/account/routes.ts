// Account endpoints: GET /api/v1/me (spec: Account) and account keys over HTTP (DESIGN §4 extension).
import { Elysia, t } from "elysia";
import { Text } from "../http/schema";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { readCache } from "../db/read-cache";
import { accountView, createAccountKey, KEY_NAME_MAX, listKeys, revokeKey, waitlistCount } from "./service";

const Scopes = t.Array(t.Union([t.Literal("read"), t.Literal("write")]), { description: 'read: GET and HEAD only; ["read", "write"]: everything the plan allows' });
const KeyView = t.Object({
  id: t.String(),
  name: t.String(),
  kind: t.Union([t.Literal("account"), t.Literal("waitlist")], { description: "An account key (wl_acct_...) or a per-waitlist key (wl_...)" }),
  prefix: t.String({ description: "The key's first characters, to tell it apart; never the key" }),
  scopes: Scopes,
  waitlists: t.Union([t.Array(t.String()), t.Null()], { description: "The waitlist keys it is limited to; null: all of the account's" }),
  created_by: t.Union([t.String(), t.Null()], { description: "The id of the key (or user) that made it; null for the account's first key and keys made with the CLI" }),
  created_at: t.Number(),
  last_used_at: t.Union([t.Number(), t.Null()]),
});

const AccountView = t.Object({
  account: t.Object({ id: t.String(), username: t.String() }),
  plan: t.Object({ name: t.String(), api_access: t.Boolean() }),
  waitlists: t.Object({ count: t.Number(), max: t.Union([t.Number(), t.Literal("unlimited")]), can_create: t.Boolean() }),
  ai_credits: t.Object({ remaining: t.Union([t.Number(), t.Null()]) }),
  api_key: t.Object({ name: t.String(), created_at: t.Number(), last_used_at: t.Union([t.Number(), t.Null()]) }),
});

export function accountRoutes(deps: { db: Db; api: ReturnType<typeof apiGuard> }) {
  const { db } = deps;
  const owned = readCache<string, number>(db, { max: 10_000, tables: ["waitlists"] });
  return new Elysia({ name: "account/routes", prefix: "/api/v1" })
    .use(deps.api)
    .get("/me", async ({ auth }) => ({ success: true, data: accountView(auth, await owned.get(auth.account.id, () => waitlistCount(db, auth.account.id))) }), {
      api: { key: "account", bucket: "account", limitedKeys: true },
      response: { 200: t.Object({ success: t.Boolean(), data: AccountView }), ...errorResponses(401, 403, 429) },
      detail: { tags: ["Account"], summary: "Get account", description: "Who the account key belongs to, its plan, waitlist allowance and AI credits. Account keys only." },
    })
    .get("/account/keys", async ({ auth }) => ({ success: true, data: { keys: await listKeys(db, auth.account.id) } }), {
      api: { key: "account", bucket: "account_keys" },
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ keys: t.Array(KeyView) }) }), ...errorResponses(401, 403, 429) },
      detail: {
        tags: ["Account"],
        summary: "List keys",
        description: "Every key of the account that works (issue 48): account keys and per-waitlist keys, oldest first, without their secret. A key limited to named waitlists gets 403.",
      },
    })
    .post(
      "/account/keys",
      async ({ auth, body, set }) => {
        const key = await createAccountKey(db, auth.account.id, body.name, { scopes: body.scopes, waitlists: body.waitlists, createdBy: auth.key.id });
        set.status = 201;
        return { success: true, data: { api_key: key } };
      },
      {
        api: { key: "account", bucket: "account_keys" },
        body: t.Object(
          {
            name: Text({ maxLength: KEY_NAME_MAX, description: "Label shown in GET /me as api_key.name" }),
            scopes: t.Optional(t.Array(t.Union([t.Literal("read"), t.Literal("write")]), { minItems: 1, maxItems: 2, uniqueItems: true, description: 'Issue 48: ["read"] makes a read-only key (a write with it is 403); default ["read", "write"]' })),
            waitlists: t.Optional(t.Array(t.String({ maxLength: 200 }), { maxItems: 100, description: "Issue 48: waitlist keys the key is limited to (any other waitlist is 403); default all of the account's" })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: t.Object({
            success: t.Boolean(),
            data: t.Object({
              api_key: t.Object({
                id: t.String(),
                name: t.String(),
                api_key: t.String({ description: "The key itself, shown this once" }),
                prefix: t.String(),
                scopes: Scopes,
                waitlists: t.Union([t.Array(t.String()), t.Null()]),
                created_at: t.Number(),
              }),
            }),
          }),
          ...errorResponses(400, 401, 403, 429),
        },
        detail: {
          tags: ["Account"],
          summary: "Create an account key",
          description: "The key (wl_acct_...) is shown once; only its SHA-256 hash is stored. It may be read-only (scopes) or limited to named waitlists (waitlists).",
        },
      },
    )
    .delete(
      "/account/keys/:id",
      async ({ auth, params }) => {
        await revokeKey(db, params.id, auth.account.id, auth.user && auth.user.role !== "owner" ? auth.user.id : undefined);
        return { success: true, message: "API key revoked" };
      },
      {
        api: { key: "account", bucket: "account_keys" },
        response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 429) },
        detail: {
          tags: ["Account"],
          summary: "Revoke a key",
          description: "Revokes any of the account's keys (account or per-waitlist) by id, the first one and the one calling included; it is refused on every instance within a second.",
        },
      },
    );
}
