// Waitlist endpoints: create and list (spec: Waitlists), settings and the per-waitlist key (DESIGN §4 extensions).
import { Elysia, t } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { regenerateWaitlistKey } from "../account/service";
import { CreateWaitlistBody, CreateWaitlistResponse, ListWaitlistsResponse, SettingsPatchBody, SettingsResponse } from "./model";
import type { Dispatcher } from "../outbox/dispatcher";
import { createWaitlist, listWaitlists, settingsOf, updateSettings } from "./service";

export function waitlistRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatcher: Pick<Dispatcher, "dispatchRows"> }) {
  const { db, config } = deps;
  return new Elysia({ name: "waitlists/routes", prefix: "/api/v1" })
    .use(deps.api)
    .post(
      "/waitlists",
      async ({ auth, body, set }) => {
        const data = await createWaitlist(db, { accountId: auth.account.id, plan: auth.account.plan }, body, config.baseUrl);
        set.status = 201;
        return { success: true, data };
      },
      {
        api: { key: "account", bucket: "waitlists_create" },
        body: CreateWaitlistBody,
        response: { 201: CreateWaitlistResponse, ...errorResponses(400, 401, 403, 409, 429) },
        detail: { tags: ["Waitlists"], summary: "Create a waitlist", description: "Account key only. The slug is derived from the name unless given; names and slugs are globally unique and never renamed (409)." },
      },
    )
    .get("/waitlists", async ({ auth }) => ({ success: true, data: await listWaitlists(db, auth.account.id, auth.key.waitlistIds) }), {
      api: { key: "account", bucket: "waitlists_list", limitedKeys: true },
      response: { 200: ListWaitlistsResponse, ...errorResponses(401, 403, 429) },
      detail: {
        tags: ["Waitlists"],
        summary: "List waitlists",
        description: "The account's waitlists, newest first, with subscriber and view counts; a key limited to named waitlists (issue 48) lists those.",
      },
    })
    .get("/waitlist/:waitlistKey/settings", async ({ auth }) => ({ success: true, data: { settings: await settingsOf(db, auth.waitlist!) } }), {
      api: { key: "any", bucket: "settings" },
      params: t.Object({ waitlistKey: t.String() }),
      response: { 200: SettingsResponse, ...errorResponses(401, 403, 429) },
      detail: { tags: ["Settings"], summary: "Get waitlist settings" },
    })
    .patch(
      "/waitlist/:waitlistKey/settings",
      async ({ auth, body }) => ({
        success: true,
        data: { settings: await updateSettings(db, auth.waitlist!, body, { blockPrivateWebhooks: config.webhookBlockPrivate, released: deps.dispatcher.dispatchRows }) },
      }),
      {
        api: { key: "any", bucket: "settings" },
        params: t.Object({ waitlistKey: t.String() }),
        body: SettingsPatchBody,
        response: { 200: SettingsResponse, ...errorResponses(400, 401, 403, 409, 429) },
        detail: {
          tags: ["Settings"],
          summary: "Update waitlist settings",
          description: "Objects merge one level deep: omitted members of referral_rewards, welcome_email, confirmation_email, webhook and email_template keep their values.",
        },
      },
    )
    .post(
      "/waitlist/:waitlistKey/api-key",
      async ({ auth, set }) => {
        set.status = 201;
        return { success: true, data: { api_key: await regenerateWaitlistKey(db, auth.waitlist!, auth.key.id) } };
      },
      {
        api: { key: "account", bucket: "account_keys" },
        params: t.Object({ waitlistKey: t.String() }),
        response: {
          201: t.Object({ success: t.Boolean(), data: t.Object({ api_key: t.Object({ id: t.String(), api_key: t.String(), created_at: t.Number() }) }) }),
          ...errorResponses(401, 429),
        },
        detail: { tags: ["Settings"], summary: "Create or regenerate the per-waitlist key", description: "Returns a new wl_ key once; the previous per-waitlist key stops working." },
      },
    );
}
