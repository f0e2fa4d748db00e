// Email endpoints (issue 45): a subscriber's email history, and bounce and complaint reports.
import { Elysia, t } from "elysia";
import { sql } from "drizzle-orm";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { EMAIL_PATTERN, Matching } from "../http/schema";
import type { Dispatch } from "../outbox/events";
import type { Logger } from "../log";
import { findSubscriber } from "../subscribers/query";
import { EMAIL_MAX } from "../subscribers/email";
import { applyEvents, EVENT_KINDS, EVENTS_MAX, parseReport, SNS_SUBSCRIBE_URL } from "./events";

const HISTORY_MAX = 200;

const EmailRecord = t.Object({
  id: t.String({ description: "The outbox id; the email's Message-ID is <id@MAIL_FROM's domain>" }),
  kind: t.Union([t.Literal("confirmation"), t.Literal("welcome"), t.Literal("milestone"), t.Literal("invitation"), t.Literal("broadcast"), t.Literal("data_export")], {
    description: "data_export: the link to a subscriber's own data, which they asked for on their status page (issue 47)",
  }),
  broadcast_id: t.Union([t.String(), t.Null()], { description: "For a broadcast: which one" }),
  subject: t.Union([t.String(), t.Null()], { description: "As sent; null until the email is rendered at its first attempt" }),
  status: t.Union([t.Literal("queued"), t.Literal("sent"), t.Literal("failed")], {
    description: "queued (waiting for its slot, or for a retry), sent (the SMTP server accepted it) or failed (given up: see error)",
  }),
  attempts: t.Number(),
  created_at: t.Number(),
  sent_at: t.Union([t.Number(), t.Null()]),
  next_attempt_at: t.Union([t.Number(), t.Null()], { description: "While queued: when it is tried next" }),
  error: t.Union([t.String(), t.Null()], { description: "The last failure, or why it was not sent (unsubscribed, bounced, cancelled...)" }),
});

const OwnEvents = t.Object(
  {
    events: t.Array(
      t.Object(
        {
          email: Matching(EMAIL_PATTERN, { maxLength: EMAIL_MAX, error: "must be a valid email address" }),
          type: t.Union(EVENT_KINDS.map((k) => t.Literal(k)), { description: "hard_bounce marks the address bounced, complaint complained; soft_bounce changes nothing" }),
          waitlist: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "A waitlist key or id; omitted: every waitlist of the account" })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: EVENTS_MAX },
    ),
  },
  { additionalProperties: false, title: "Reports", description: "Our own form: up to 1,000 reports" },
);
const SNS = "Amazon SNS (an HTTPS subscription to an SES bounce and complaint topic). SNS sends no custom header: give the key as the password of the endpoint URL (https://sns:KEY@host/api/v1/email/events)";
const SnsConfirmation = t.Object(
  {
    Type: t.Literal("SubscriptionConfirmation"),
    SubscribeURL: Matching(SNS_SUBSCRIBE_URL, { maxLength: 2048, error: "must be an https URL of sns.<region>.amazonaws.com", description: "Confirmed by a GET; only Amazon's own host is followed" }),
  },
  { additionalProperties: true, title: "SNS subscription", description: SNS },
);
const SnsMessage = t.Object(
  {
    Type: t.Union([t.Literal("Notification"), t.Literal("UnsubscribeConfirmation")]),
    TopicArn: t.String(),
    Message: t.Optional(t.String({ description: "The SES notification as JSON text: Bounce (Permanent marks bounced) or Complaint; anything else is ignored" })),
  },
  { additionalProperties: true, title: "SNS notification", description: SNS },
);
const Postmark = t.Object(
  {
    RecordType: t.String({ minLength: 1, description: "Bounce (HardBounce, BadEmailAddress, ManuallyDeactivated and Blocked mark bounced) or SpamComplaint; other records are ignored" }),
    Email: t.Optional(t.String()),
    Type: t.Optional(t.String()),
  },
  { additionalProperties: true, title: "Postmark", description: "A Postmark bounce or spam-complaint webhook; add X-Api-Key as a custom header, or the key as the password of the URL" },
);

export function emailRoutes(deps: { db: Db; api: ReturnType<typeof apiGuard>; dispatch: Dispatch; log: Logger }) {
  const { db, dispatch, log } = deps;
  return new Elysia({ name: "email/routes" })
    .use(deps.api)
    .get(
      "/api/v1/waitlist/:waitlistKey/subscribers/:idOrEmail/emails",
      async ({ auth, params }) => {
        const s = await findSubscriber(db, auth.waitlist!.id, params.idOrEmail);
        const rows = await db.rows<Record<string, any>>(sql`SELECT o.id, o.topic, o.related_id, o.payload, o.status, o.attempts, o.created_at, o.sent_at, o.next_attempt_at, o.last_error,
            b.subject AS broadcast_subject
          FROM outbox o LEFT JOIN broadcasts b ON o.topic = 'broadcast' AND b.id = o.related_id
          WHERE o.subscriber_id = ${s.id} AND o.kind = 'email' ORDER BY o.created_at DESC, o.id DESC LIMIT ${HISTORY_MAX}`);
        const emails = rows.map((r) => ({
          id: r.id,
          kind: r.topic,
          broadcast_id: r.topic === "broadcast" ? r.related_id : null,
          subject: r.payload ? (JSON.parse(r.payload).subject as string) : null,
          status: r.status === "pending" ? "queued" : r.status,
          attempts: Number(r.attempts),
          created_at: Number(r.created_at),
          sent_at: r.sent_at === null ? null : Number(r.sent_at),
          next_attempt_at: r.status === "pending" ? Number(r.next_attempt_at) : null,
          error: r.status === "sent" ? null : (r.last_error ?? null),
        }));
        return { success: true, data: { emails } };
      },
      {
        api: { key: "any", bucket: "subscribers", minPlan: "growth" },
        params: t.Object({ waitlistKey: t.String(), idOrEmail: t.String({ description: "Subscriber id, or email (URL-encoded)" }) }),
        response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ emails: t.Array(EmailRecord) }) }), ...errorResponses(401, 403, 404, 429) },
        detail: {
          tags: ["Subscribers"],
          summary: "A subscriber's emails",
          description: "Every email queued or sent to the subscriber, newest first (at most 200; sent ones are kept 30 days), without the body.",
        },
      },
    )
    .post(
      "/api/v1/email/events",
      async ({ auth, body }) => {
        const report = parseReport(body as Record<string, any>);
        if (report.kind === "subscription") {
          const res = await fetch(report.subscribeUrl, { redirect: "error", signal: AbortSignal.timeout(10_000) }).catch((err: Error) => err);
          if (res instanceof Error || !res.ok) {
            log.warn("SNS subscription not confirmed", { error: res instanceof Error ? res.message : `HTTP ${res.status}` });
            // a 5xx would be this server's failure to a client; the operator asks SNS for the confirmation again
            return {
              success: false,
              message: "The SNS subscription could not be confirmed from this server: request the confirmation again in the SNS console (or confirm its SubscribeURL there)",
              data: { received: 0, bounced: 0, complained: 0, soft_bounces: 0, unknown: 0 },
            };
          }
          return { success: true, message: "SNS subscription confirmed", data: { received: 0, bounced: 0, complained: 0, soft_bounces: 0, unknown: 0 } };
        }
        if (report.kind === "ignored") return { success: true, message: `Ignored: ${report.what}`, data: { received: 1, bounced: 0, complained: 0, soft_bounces: 0, unknown: 0 } };
        const applied = await applyEvents(db, auth.account.id, report.events, dispatch);
        return { success: true, message: `${applied.received} report(s) read`, data: applied };
      },
      {
        api: { key: "account", bucket: "account" },
        body: t.Union([OwnEvents, SnsConfirmation, SnsMessage, Postmark]),
        response: {
          200: t.Object({
            success: t.Boolean(),
            message: t.String(),
            data: t.Object({
              received: t.Number(),
              bounced: t.Number({ description: "Subscribers newly marked bounced" }),
              complained: t.Number({ description: "Subscribers newly marked complained" }),
              soft_bounces: t.Number(),
              unknown: t.Number({ description: "Reports naming an address that is no subscriber of the account (or of the waitlist named)" }),
            }),
          }),
          ...errorResponses(400, 401, 404, 429),
        },
        detail: {
          tags: ["Email"],
          summary: "Report bounces and complaints",
          description:
            "Our own bulk form, or a provider's webhook body as it sends it (Amazon SES over SNS, Postmark). A bounced or complained subscriber gets no further email and keeps their place; subscriber.bounced and subscriber.complained webhooks go out. Every report is checked before any is applied; a waitlist the account does not have is a 404. An SNS subscription this server cannot confirm (Amazon's host unreachable) answers success false, to be confirmed again from the SNS console. The key may also come as the password of HTTP Basic authentication.",
        },
      },
    );
}
