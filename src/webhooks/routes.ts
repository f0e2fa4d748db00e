// Webhook endpoints (issue 49): several per waitlist with filters and formats, each with its secret, delivery log,
// retry and replay; and the settings' webhook actions (DESIGN §4 extension), which act on the first endpoint.
import { Elysia, t } from "elysia";
import { now, token } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_FORMATS } from "../db/schema";
import type { Waitlist } from "../http/api";
import type { apiGuard } from "../http/api";
import { conflict } from "../http/errors";
import { errorResponses } from "../http/error-schemas";
import { QueryInt } from "../http/schema";
import type { Dispatcher } from "../outbox/dispatcher";
import { EVENT_TYPES } from "../outbox/events";
import { envelope } from "../outbox/render";
import { formatBody } from "./chat";
import {
  createEndpoint,
  deleteEndpoint,
  DESCRIPTION_MAX,
  endpointView,
  endpointWithSecret,
  findEndpoint,
  listEndpoints,
  MAX_ENDPOINTS,
  newSecret,
  rotateSecret,
  signingSecrets,
  updateEndpoint,
  type Endpoint,
} from "./endpoints";
import { deliveriesPage, DELIVERIES_LIMIT, REPLAY_AT_ONCE, replay, retryDelivery } from "./log";
import { deliver } from "./send";
import { firstEndpoint, rotateSettingSecret } from "./settings";

/** One of these strings (t.UnionEnum would default an omitted optional field to the first). */
const oneOf = <T extends string>(values: readonly T[]) => t.Unsafe<T>(t.Union(values.map((v) => t.Literal(v))));
const EventType = oneOf(EVENT_TYPES);
const Format = oneOf(WEBHOOK_FORMATS);
const DeliveryStatus = oneOf(WEBHOOK_DELIVERY_STATUSES);

const EndpointFields = {
  id: t.String(),
  url: t.String(),
  description: t.Union([t.String(), t.Null()]),
  events: t.Array(t.String(), { description: "The event types sent to it; empty: every type" }),
  enabled: t.Boolean(),
  format: Format,
  legacy_signature: t.Boolean({ description: "Also the X-Webhook-* headers (HMAC-SHA256 hex of the body) beside Standard Webhooks'" }),
  disabled_reason: t.Union([t.String(), t.Null()], { description: "Why it was switched off by the service (after 5 days of failures)" }),
  failing_since: t.Union([t.Number(), t.Null()], { description: "Unix ms of the first failed attempt since its last delivery" }),
  created_at: t.Number(),
  updated_at: t.Number(),
};
const EndpointSummary = t.Object(EndpointFields);
const EndpointFull = t.Object({ ...EndpointFields, secret: t.String({ description: "whsec_...: the Standard Webhooks signing secret" }) });
const EndpointResponse = t.Object({ success: t.Boolean(), data: t.Object({ webhook: EndpointFull }) });

const Input = {
  url: t.String({ maxLength: 2048, description: "http(s) URL the events are POSTed to" }),
  description: t.Optional(t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()])),
  events: t.Optional(t.Array(EventType, { maxItems: EVENT_TYPES.length, description: "Only these event types; empty or omitted: every type" })),
  enabled: t.Optional(t.Boolean()),
  format: t.Optional(Format),
  legacy_signature: t.Optional(t.Boolean()),
};

const Delivery = t.Object({
  id: t.String(),
  event_id: t.String({ description: "The event's webhook-id (the same on every attempt and endpoint)" }),
  event: t.String(),
  status: DeliveryStatus,
  status_code: t.Union([t.Number(), t.Null()]),
  latency_ms: t.Union([t.Number(), t.Null()]),
  response: t.Union([t.String(), t.Null()], { description: "The first 1 KB of the receiver's answer" }),
  error: t.Union([t.String(), t.Null()]),
  attempted_at: t.Number({ description: "Unix ms" }),
});

const TestResult = t.Object({
  success: t.Boolean(),
  data: t.Object({ event_id: t.String(), delivered: t.Boolean(), status: t.Union([t.Number(), t.Null()]), error: t.Union([t.String(), t.Null()]), duration_ms: t.Number() }),
});

const waitlistParams = t.Object({ waitlistKey: t.String() });
const endpointParams = t.Object({ waitlistKey: t.String(), webhookId: t.String() });

export function webhookRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatcher: Pick<Dispatcher, "dispatchRows"> }) {
  const { db, config, dispatcher } = deps;
  const policy = { key: "any", bucket: "settings" } as const;
  const blockPrivate = config.webhookBlockPrivate;

  /** A signed webhook.test event to the endpoint now (even while it is disabled); not kept in its log. */
  async function sendTest(w: Waitlist, e: Endpoint) {
    const id = `evt_test_${token(20)}`;
    const at = now();
    const json = JSON.stringify(envelope(id, "webhook.test", at, w, { message: "This is a test event from Waitlist." }));
    const result = await deliver(
      { url: e.url, secrets: signingSecrets(e, at), legacy: Boolean(e.legacySignature) },
      formatBody(e.format, json),
      { id, type: "webhook.test", createdAt: at },
      { blockPrivate },
    );
    return { success: true, data: { event_id: id, delivered: result.ok, status: result.status, error: result.error, duration_ms: result.ms } };
  }

  const settings = new Elysia({ name: "webhooks/settings", prefix: "/api/v1/waitlist/:waitlistKey/settings/webhook" })
    .use(deps.api)
    .post(
      "/test",
      async ({ auth }) => {
        const first = await firstEndpoint(db, auth.waitlist!.id);
        // the waitlist's state, not the request's fault (issue 44: a request valid by the document is no 400)
        if (!first) throw conflict("webhook.url is not set: PATCH the settings with a webhook URL first");
        return sendTest(auth.waitlist!, first);
      },
      {
        api: policy,
        params: waitlistParams,
        response: { 200: TestResult, ...errorResponses(401, 403, 409, 429) },
        detail: {
          tags: ["Settings"],
          summary: "Send a test webhook",
          description: "Posts a signed webhook.test event to the setting's URL (the first endpoint) now, even while it is disabled, and reports what the receiver answered. 409 while no URL is set.",
        },
      },
    )
    .post("/rotate-secret", async ({ auth }) => ({ success: true, data: { signing_secret: await rotateSettingSecret(db, auth.waitlist!, (id) => rotateSecret(db, auth.waitlist!, id), newSecret()) } }), {
      api: policy,
      params: waitlistParams,
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ signing_secret: t.String() }) }), ...errorResponses(401, 403, 429) },
      detail: {
        tags: ["Settings"],
        summary: "Rotate the webhook signing secret",
        description: "The first endpoint's secret (POST .../webhooks/{id}/rotate-secret): X-Webhook-Signature uses the new one at once; the Standard Webhooks signature carries both for 24 hours.",
      },
    });

  const endpoints = new Elysia({ name: "webhooks/endpoints", prefix: "/api/v1/waitlist/:waitlistKey/webhooks" })
    .use(deps.api)
    .get("", async ({ auth }) => ({ success: true, data: { webhooks: (await listEndpoints(db, auth.waitlist!.id)).map((e) => endpointView(e)) } }), {
      api: policy,
      params: waitlistParams,
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ webhooks: t.Array(EndpointSummary) }) }), ...errorResponses(401, 403, 429) },
      detail: { tags: ["Webhooks"], summary: "List webhook endpoints", description: "Oldest first; the first one is the settings' `webhook`. Secrets are shown by GET .../webhooks/{id}." },
    })
    .post(
      "",
      async ({ auth, body, set }) => {
        const e = await createEndpoint(db, auth.waitlist!, body, { blockPrivate });
        set.status = 201;
        return { success: true, data: { webhook: endpointWithSecret(e) } };
      },
      {
        api: policy,
        params: waitlistParams,
        body: t.Object(Input, { additionalProperties: false }),
        response: { 201: EndpointResponse, ...errorResponses(400, 401, 403, 409, 429) },
        detail: {
          tags: ["Webhooks"],
          summary: "Add a webhook endpoint",
          description: `Up to ${MAX_ENDPOINTS} per waitlist (409 beyond). Every delivery carries Standard Webhooks v1 headers (webhook-id, webhook-timestamp, webhook-signature) signed with the endpoint's \`secret\`; \`format\` slack or discord sends a short message (\`text\`) in place of the event's JSON.`,
        },
      },
    )
    .get("/:webhookId", async ({ auth, params }) => ({ success: true, data: { webhook: endpointWithSecret(await findEndpoint(db, auth.waitlist!.id, params.webhookId)) } }), {
      api: policy,
      params: endpointParams,
      response: { 200: EndpointResponse, ...errorResponses(401, 403, 404, 429) },
      detail: { tags: ["Webhooks"], summary: "Get a webhook endpoint", description: "With its signing secret." },
    })
    .patch(
      "/:webhookId",
      async ({ auth, params, body }) => {
        const { endpoint, released } = await updateEndpoint(db, auth.waitlist!, params.webhookId, body, { blockPrivate });
        dispatcher.dispatchRows(released);
        return { success: true, data: { webhook: endpointWithSecret(endpoint) } };
      },
      {
        api: policy,
        params: endpointParams,
        body: t.Object({ ...Input, url: t.Optional(Input.url) }, { additionalProperties: false }),
        response: { 200: EndpointResponse, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          tags: ["Webhooks"],
          summary: "Change a webhook endpoint",
          description:
            "Events for a disabled endpoint are kept as `skipped` in its log (a replay sends them); retries that came due while it was disabled are sent as soon as it is enabled again, until their schedule would have ended.",
        },
      },
    )
    .delete(
      "/:webhookId",
      async ({ auth, params }) => {
        await deleteEndpoint(db, auth.waitlist!, params.webhookId);
        return { success: true, message: "Webhook endpoint deleted" };
      },
      {
        api: policy,
        params: endpointParams,
        response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 429) },
        detail: { tags: ["Webhooks"], summary: "Delete a webhook endpoint", description: "With its undelivered events and its delivery log." },
      },
    )
    .post("/:webhookId/rotate-secret", async ({ auth, params }) => ({ success: true, data: { secret: (await rotateSecret(db, auth.waitlist!, params.webhookId)).secret } }), {
      api: policy,
      params: endpointParams,
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ secret: t.String() }) }), ...errorResponses(401, 403, 404, 429) },
      detail: {
        tags: ["Webhooks"],
        summary: "Rotate an endpoint's signing secret",
        description: "For 24 hours after, every delivery's webhook-signature carries a signature under each secret (space-separated), so a receiver switches over without a gap.",
      },
    })
    .post("/:webhookId/test", async ({ auth, params }) => sendTest(auth.waitlist!, await findEndpoint(db, auth.waitlist!.id, params.webhookId)), {
      api: policy,
      params: endpointParams,
      response: { 200: TestResult, ...errorResponses(401, 403, 404, 429) },
      detail: { tags: ["Webhooks"], summary: "Send a test event", description: "A signed webhook.test event now, in the endpoint's format, even while it is disabled; not kept in its log." },
    })
    .get(
      "/:webhookId/deliveries",
      async ({ auth, params, query }) => {
        const endpoint = await findEndpoint(db, auth.waitlist!.id, params.webhookId);
        return { success: true, data: await deliveriesPage(db, endpoint, { ...query, limit: query.limit === undefined ? undefined : Number(query.limit) }) };
      },
      {
        api: policy,
        params: endpointParams,
        query: t.Object(
          {
            status: t.Optional(DeliveryStatus),
            event: t.Optional(EventType),
            since: t.Optional(t.String({ description: "Only attempts from this time on: Unix ms or an ISO 8601 time" })),
            before: t.Optional(t.String({ description: "The page after this one: the previous page's next_cursor" })),
            limit: t.Optional(QueryInt({ minimum: 1, maximum: DELIVERIES_LIMIT, description: `Entries per page, 1 to ${DELIVERIES_LIMIT}, default 50` })),
          },
          { additionalProperties: false },
        ),
        response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ deliveries: t.Array(Delivery), next_cursor: t.Union([t.String(), t.Null()]) }) }), ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          tags: ["Webhooks"],
          summary: "An endpoint's delivery log",
          description:
            "Every attempt, newest first, kept 30 days: delivered (2xx), retrying (failed, another attempt scheduled), failed (no more attempts), skipped (the endpoint was disabled).",
        },
      },
    )
    .post(
      "/:webhookId/deliveries/:deliveryId/retry",
      async ({ auth, params, set }) => {
        const endpoint = await findEndpoint(db, auth.waitlist!.id, params.webhookId);
        const { eventId, rows } = await retryDelivery(db, endpoint, params.deliveryId);
        dispatcher.dispatchRows(rows);
        set.status = 202;
        return { success: true, data: { event_id: eventId } };
      },
      {
        api: policy,
        params: t.Object({ waitlistKey: t.String(), webhookId: t.String(), deliveryId: t.String() }),
        response: { 202: t.Object({ success: t.Boolean(), data: t.Object({ event_id: t.String() }) }), ...errorResponses(401, 403, 404, 409, 429) },
        detail: {
          tags: ["Webhooks"],
          summary: "Send a delivery's event again",
          description: "Now, with the same webhook-id; the attempt shows in the log. 409 while the endpoint is disabled or once the event is no longer kept (30 days).",
        },
      },
    )
    .post(
      "/:webhookId/replay",
      async ({ auth, params, body, set }) => {
        const endpoint = await findEndpoint(db, auth.waitlist!.id, params.webhookId);
        const rows = await replay(db, endpoint, body.since);
        // the first ones now; the retry job sends the rest a batch at a time
        dispatcher.dispatchRows(rows.slice(0, REPLAY_AT_ONCE));
        set.status = 202;
        return { success: true, data: { replayed: rows.length } };
      },
      {
        api: policy,
        params: endpointParams,
        body: t.Object({ since: t.Union([t.Integer({ minimum: 0, description: "Unix ms" }), t.String({ description: "An ISO 8601 time" })]) }, { additionalProperties: false }),
        response: { 202: t.Object({ success: t.Boolean(), data: t.Object({ replayed: t.Number({ description: "How many events are sent again" }) }) }), ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          tags: ["Webhooks"],
          summary: "Send again every event since a time that is not delivered",
          description: "Failed, still retrying, or skipped while the endpoint was disabled: each is sent now (its webhook-id unchanged). 409 while the endpoint is disabled.",
        },
      },
    );

  return new Elysia({ name: "webhooks/routes" }).use(settings).use(endpoints);
}
