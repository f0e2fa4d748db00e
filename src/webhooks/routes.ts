// Webhook settings actions (DESIGN §4 extension): send a signed test event, rotate the signing secret.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import { now, token } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { conflict } from "../http/errors";
import { errorResponses } from "../http/error-schemas";
import { envelope } from "../outbox/render";
import { deliver } from "./send";

export function webhookRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard> }) {
  const { db, config } = deps;
  const params = t.Object({ waitlistKey: t.String() });
  return new Elysia({ name: "webhooks/routes", prefix: "/api/v1/waitlist/:waitlistKey/settings/webhook" })
    .use(deps.api)
    .post(
      "/test",
      async ({ auth }) => {
        const w = auth.waitlist!;
        // the waitlist's state, not the request's fault (issue 44: a request valid by the document is no 400)
        if (!w.webhookUrl) throw conflict("webhook.url is not set: PATCH the settings with a webhook URL first");
        const id = `evt_test_${token(20)}`;
        const at = now();
        const body = JSON.stringify(envelope(id, "webhook.test", at, w, { message: "This is a test event from Waitlist." }));
        const result = await deliver(w.webhookUrl, w.signingSecret, body, { id, type: "webhook.test", createdAt: at }, { blockPrivate: config.webhookBlockPrivate });
        return { success: true, data: { event_id: id, delivered: result.ok, status: result.status, error: result.error, duration_ms: result.ms } };
      },
      {
        api: { key: "any", bucket: "settings" },
        params,
        response: {
          200: t.Object({
            success: t.Boolean(),
            data: t.Object({ event_id: t.String(), delivered: t.Boolean(), status: t.Union([t.Number(), t.Null()]), error: t.Union([t.String(), t.Null()]), duration_ms: t.Number() }),
          }),
          ...errorResponses(401, 403, 409, 429),
        },
        detail: {
          tags: ["Settings"],
          summary: "Send a test webhook",
          description: "Posts a signed webhook.test event to the configured URL now (even while the webhook is disabled) and reports what the receiver answered. 409 while no URL is set.",
        },
      },
    )
    .post(
      "/rotate-secret",
      async ({ auth }) => {
        const secret = `whsec_${token(40)}`;
        const { waitlists } = db.t;
        await db.tx((tx) => tx.update(waitlists).set({ signingSecret: secret, updatedAt: now() }).where(eq(waitlists.id, auth.waitlist!.id)));
        return { success: true, data: { signing_secret: secret } };
      },
      {
        api: { key: "any", bucket: "settings" },
        params,
        response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ signing_secret: t.String() }) }), ...errorResponses(401, 403, 429) },
        detail: { tags: ["Settings"], summary: "Rotate the webhook signing secret", description: "Deliveries from now on (retries included) are signed with the new secret." },
      },
    );
}
