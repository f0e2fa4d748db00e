// Issue 49 item 5: every webhook event's payload in the OpenAPI 3.1 document's `webhooks` section, with its schema
// and the headers each delivery carries (test/events.e2e.test.ts checks real deliveries against it).
import { t, type TSchema } from "elysia";
import { EVENT_TYPES } from "../outbox/events";
import { Subscriber } from "../subscribers/model";

const WaitlistRef = t.Object({ id: t.String(), key: t.String(), slug: t.String(), name: t.String() }, { additionalProperties: false });
const Milestone = t.Object(
  { referrals: t.Number(), reward: t.String(), tag: t.Union([t.String(), t.Null()]), reached_at: t.Number({ description: "Unix ms" }) },
  { additionalProperties: false },
);

const DATA: Record<string, { data: TSchema; about: string }> = {
  "referral.credited": { data: t.Object({ referrer: Subscriber, referee: Subscriber }, { additionalProperties: false }), about: "A referral counted for its referrer (at the referee's sign-up, or their confirmation with double opt-in)." },
  "milestone.reached": { data: t.Object({ subscriber: Subscriber, milestone: Milestone }, { additionalProperties: false }), about: "A referrer reached a milestone's number of referrals." },
  "subscriber.deleted": {
    data: t.Union([
      t.Object({ subscriber: Subscriber }, { additionalProperties: false }),
      t.Object({ subscriber: t.Object({ id: t.String() }, { additionalProperties: false }), erased: t.Literal(true), reason: t.Optional(t.Literal("retention")) }, { additionalProperties: false }),
    ]),
    about: "The subscriber as they were; erased (DELETE ?erase=true, or retention_days): only their id.",
  },
  "webhook.test": { data: t.Object({ message: t.String() }, { additionalProperties: false }), about: "Sent by POST .../webhooks/{id}/test and .../settings/webhook/test." },
};

const ABOUT: Record<string, string> = {
  "subscriber.created": "A sign-up in line (confirmed at sign-up, without double opt-in), an import's row with notify, a bulk item.",
  "subscriber.pending": "A sign-up that waits for its email's confirmation (double opt-in).",
  "subscriber.confirmed": "A pending subscriber confirmed their email.",
  "subscriber.updated": "PUT on the subscriber, or their tags changed.",
  "subscriber.invited": "Let in on launch day (POST .../subscribers/invite).",
  "subscriber.joined": "An invited subscriber accepted.",
  "subscriber.rejected": "Taken out of the line.",
  "subscriber.unsubscribed": "They stopped the emails.",
  "subscriber.bounced": "Their address bounced.",
  "subscriber.complained": "They marked an email as spam.",
};

const header = (name: string, required: boolean, description: string) => ({ name, in: "header", required, schema: { type: "string" }, description });
const LEGACY = "Only to an endpoint with legacy_signature on (the one made from the settings' webhook): ";
const HEADERS = [
  header("webhook-id", true, "Standard Webhooks: the event's id, the same on every retry and at every endpoint (deduplicate on it)"),
  header("webhook-timestamp", true, "Standard Webhooks: the attempt's time, Unix seconds"),
  header(
    "webhook-signature",
    true,
    "Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the endpoint's whsec_ secret; for 24 hours after a rotation, one under each secret, space-separated",
  ),
  header("X-Webhook-Id", false, `${LEGACY}the event's id`),
  header("X-Webhook-Event", false, `${LEGACY}the event's type`),
  header("X-Webhook-Timestamp", false, `${LEGACY}the event's created_at, Unix ms`),
  header("X-Webhook-Signature", false, `${LEGACY}\`sha256=<hex HMAC-SHA256 of the raw body>\` under the current secret`),
];

/** The document's `webhooks`: one POST a receiver gets per event type. */
export function webhooksSection(): Record<string, unknown> {
  const types = [...EVENT_TYPES, "webhook.test"];
  return Object.fromEntries(
    types.map((type) => {
      const { data, about } = DATA[type] ?? { data: t.Object({ subscriber: Subscriber }, { additionalProperties: false }), about: ABOUT[type] ?? type };
      const schema = t.Object(
        { id: t.String({ description: "evt_..., the same on every retry" }), type: t.Literal(type), created_at: t.Number({ description: "Unix ms" }), waitlist: WaitlistRef, data },
        { additionalProperties: false },
      );
      return [
        type,
        {
          post: {
            operationId: `webhook_${type.replace(/\./g, "_")}`,
            summary: type,
            description: `${about} Signed with Standard Webhooks v1 (and the X-Webhook-Signature of the body where the endpoint's legacy_signature is on). An endpoint of format slack or discord gets a short message in place of this body: \`{"text": ...}\` (Discord: also \`content\`).`,
            tags: ["Webhooks"],
            security: [],
            parameters: HEADERS,
            requestBody: { required: true, content: { "application/json": { schema } } },
            responses: { "200": { description: "Any 2xx within 10 s is a delivery; anything else is retried (about 30 s, 2 min, 10 min, 1 h, 6 h, 24 h)" } },
          },
        },
      ];
    }),
  );
}
