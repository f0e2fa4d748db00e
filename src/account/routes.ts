// Account endpoints: GET /api/v1/me (spec: Account) and account keys over HTTP (DESIGN §4 extension).
import { Elysia, t } from "elysia";
import { Text } from "../http/schema";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { readCache } from "../db/read-cache";
import { accountView, createAccountKey, KEY_NAME_MAX, revokeKey, waitlistCount } from "./service";

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
      api: { key: "account", bucket: "account" },
      response: { 200: t.Object({ success: t.Boolean(), data: AccountView }), ...errorResponses(401, 429) },
      detail: { tags: ["Account"], summary: "Get account", description: "Who the account key belongs to, its plan, waitlist allowance and AI credits. Account keys only." },
    })
    .post(
      "/account/keys",
      async ({ auth, body, set }) => {
        set.status = 201;
        return { success: true, data: { api_key: await createAccountKey(db, auth.account.id, body.name) } };
      },
      {
        api: { key: "account", bucket: "account_keys" },
        body: t.Object({ name: Text({ maxLength: KEY_NAME_MAX, description: "Label shown in GET /me as api_key.name" }) }, { additionalProperties: false }),
        response: {
          201: t.Object({ success: t.Boolean(), data: t.Object({ api_key: t.Object({ id: t.String(), name: t.String(), api_key: t.String(), created_at: t.Number() }) }) }),
          ...errorResponses(400, 401, 429),
        },
        detail: { tags: ["Account"], summary: "Create an account key", description: "The key (wl_acct_...) is shown once; only its SHA-256 hash is stored." },
      },
    )
    .delete(
      "/account/keys/:id",
      async ({ auth, params }) => {
        await revokeKey(db, params.id, auth.account.id);
        return { success: true, message: "API key revoked" };
      },
      {
        api: { key: "account", bucket: "account_keys" },
        response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 404, 429) },
        detail: { tags: ["Account"], summary: "Revoke a key", description: "Revokes one of the account's keys (account or per-waitlist) by id; it stops working at once." },
      },
    );
}
