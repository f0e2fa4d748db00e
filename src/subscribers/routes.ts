// Subscriber endpoints (spec: Subscribers): sign-up, list, get, update, delete, and the CSV export extension.
import { Elysia, t } from "elysia";
import { Int } from "../http/schema";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { clientIp } from "../http/client-ip";
import { notFound } from "../http/errors";
import { errorResponses, SignUpErrorBody, ErrorBody } from "../http/error-schemas";
import { ListQuery, ListResponse, MessageResponse, SignUpBody, SignUpResponse, Subscriber, SubscriberResponse, UpdateBody, UpdateResponse } from "./model";
import { signUp } from "./signup";
import { findSubscriber, getSubscriber, listSubscribers } from "./query";
import { deleteSubscriber, updateSubscriber } from "./manage";
import { exportSubscribers, EXPORT_FORMATS } from "./export";
import { personalData, PersonalData } from "./personal-data";
import { BULK_MAX, bulkSignUp } from "./bulk";
import { findByInviteToken, invite, INVITE_MAX, inviteState, reject } from "./access";
import type { Dispatch } from "../outbox/events";
import { readCache } from "../db/read-cache";

const WaitlistParams = t.Object({ waitlistKey: t.String() });
const SubscriberParams = t.Object({ waitlistKey: t.String(), idOrEmail: t.String({ description: "Subscriber id, or email (URL-encoded)" }) });

/** The URL's query string ("" without one): a list's parameters as sent. */
const queryOf = (url: string) => {
  const at = url.indexOf("?");
  return at < 0 ? "" : url.slice(at + 1);
};

function refererHost(request: Request): string | null {
  const referer = request.headers.get("referer");
  if (!referer) return null;
  try {
    return new URL(referer).hostname || null;
  } catch {
    return null;
  }
}

export function subscriberRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatch: Dispatch }) {
  const { db, config, dispatch } = deps;
  const subscribers = { key: "any", bucket: "subscribers", minPlan: "growth" } as const;
  // issue 19: what a read answered is answered again until anything is committed (a waitlist's version is part of
  // the key: its settings shape the answer)
  const lists = readCache<string, Awaited<ReturnType<typeof listSubscribers>>>(db, { max: 1_000 });
  const ones = readCache<string, Awaited<ReturnType<typeof getSubscriber>>>(db, { max: 10_000 });
  const cachedKey = (w: { id: string; version: number }, ...parts: string[]) => `${w.id}:${w.version}\0${parts.join("\0")}`;
  return new Elysia({ name: "subscribers/routes", prefix: "/api/v1/waitlist/:waitlistKey" })
    .use(deps.api)
    .post(
      "/sign-up",
      async ({ auth, body, request, server }) =>
        signUp(db, auth.waitlist!, body, {
          joinedWith: "api",
          requestIp: clientIp(request, server, config.trustProxy),
          refererHost: refererHost(request),
          baseUrl: config.baseUrl,
          dispatch,
        }),
      {
        api: { key: "any", bucket: "subscribers", errors: "signup" },
        params: WaitlistParams,
        body: SignUpBody,
        response: { 200: SignUpResponse, 400: SignUpErrorBody, 401: ErrorBody, 403: ErrorBody, 429: SignUpErrorBody },
        detail: {
          tags: ["Subscribers"],
          summary: "Sign up",
          description:
            "Adds a subscriber; idempotent per email. Already registered and already pending are 200. Fraud checks run only with metadata.client_ip or metadata.fingerprint. With the waitlist's validate_emails on (the default), an address on a disposable email domain is 400 (a list of domains, not a pattern).",
        },
      },
    )
    .get(
      "/subscribers",
      async ({ auth, query, request }) => ({
        success: true,
        data: await lists.get(cachedKey(auth.waitlist!, queryOf(request.url)), () =>
          listSubscribers(db, auth.waitlist!, query, config.baseUrl),
        ),
      }),
      {
      api: subscribers,
      params: WaitlistParams,
      query: ListQuery,
      response: { 200: ListResponse, ...errorResponses(400, 401, 403, 429) },
      detail: { tags: ["Subscribers"], summary: "List subscribers", description: "Paginated; sort by position, points, date, referral_count or email; filter by tag, status, unsubscribed (true|false), email_status or an answer (answers.KEY=VALUE, KEY a question of the waitlist: a multiselect's answer holding VALUE, a checkbox's true or false), or search with q. Any other parameter is a 400." },
      },
    )
    .get(
      "/subscribers/export",
      async ({ auth, query, request }) => {
        const w = auth.waitlist!;
        const { format = "csv", ...filters } = query as Record<string, string>;
        // the filters are checked before the first byte, so a bad one is a 400 rather than a broken download
        const stream = await exportSubscribers(db, w, format as (typeof EXPORT_FORMATS)[number], filters, config.baseUrl, request);
        const [type, ext] = format === "jsonl" ? ["application/x-ndjson", "jsonl"] : ["text/csv; charset=utf-8", "csv"];
        return new Response(stream, { headers: { "content-type": type, "content-disposition": `attachment; filename="${w.slug}-subscribers.${ext}"` } });
      },
      {
        api: subscribers,
        params: WaitlistParams,
        query: t.Object(
          {
            format: t.Optional(t.Union([t.Literal("csv"), t.Literal("jsonl")], { description: "csv (default): a header row, one subscriber a line; jsonl: one Subscriber object (as GET answers it) a line" })),
            tag: ListQuery.properties.tag,
            status: ListQuery.properties.status,
            unsubscribed: ListQuery.properties.unsubscribed,
            email_status: ListQuery.properties.email_status,
            q: ListQuery.properties.q,
          },
          // `answers.KEY=VALUE` as the list takes it (checked by the handler)
          { additionalProperties: t.String({ maxLength: 200 }) },
        ),
        detail: {
          tags: ["Subscribers"],
          summary: "Export subscribers (CSV or JSON Lines)",
          description:
            "Streams every subscriber with every field (answers, utm, referrer_host, tags, status, email status, referrals), ranked ones by position, then the others by sign-up time, in constant memory. Filtered like the list: tag, status, unsubscribed, email_status, q and answers.KEY (positions stay those of the whole line); any other parameter is a 400. Growth plan or higher.",
          responses: {
            200: {
              description: "An attachment: CSV with a header row (a column per field, answers.KEY per question), or JSON Lines",
              content: { "text/csv": { schema: { type: "string" } }, "application/x-ndjson": { schema: { type: "string" } } },
            },
            400: { description: "An unknown format, parameter or tag, or a bad answers.KEY filter", content: { "application/json": { schema: ErrorBody as any } } },
          },
        },
      },
    )
    .post(
      "/subscribers/bulk",
      async ({ auth, body, request, server }) => ({
        success: true,
        data: {
          results: await bulkSignUp(db, auth.waitlist!, body.subscribers, body.mode ?? "skip", {
            joinedWith: "api",
            requestIp: clientIp(request, server, config.trustProxy),
            refererHost: refererHost(request),
            baseUrl: config.baseUrl,
            dispatch,
          }),
        },
      }),
      {
        api: subscribers,
        params: WaitlistParams,
        body: t.Object(
          {
            subscribers: t.Array(t.Unknown({ description: "A sign-up body (as POST .../sign-up takes)" }), { minItems: 1, maxItems: BULK_MAX }),
            mode: t.Optional(t.Union([t.Literal("skip"), t.Literal("update")], { description: "An email already there: skip (default) leaves it, update sets its name, phone and metadata (merged)" })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: t.Object({
            success: t.Boolean(),
            data: t.Object({
              results: t.Array(
                t.Object({
                  index: t.Number({ description: "The item's place in the request, from 0" }),
                  status: t.Union([t.Literal("created"), t.Literal("updated"), t.Literal("skipped"), t.Literal("invalid")]),
                  subscriber: t.Optional(Subscriber),
                  error: t.Optional(t.String({ description: "Why the item is invalid, naming the field" })),
                }),
              ),
            }),
          }),
          ...errorResponses(400, 401, 403, 429),
        },
        detail: {
          tags: ["Subscribers"],
          summary: "Sign up many (extension)",
          description:
            "Up to 1,000 sign-up bodies, run in order in one transaction, each checked as a single sign-up is (an invalid one is reported as invalid with the reason and the rest go in). An email already on the list is skipped, or updated in mode update. Results come in the request's order, with the subscriber as committed. Emails and webhooks go out as for single sign-ups, once the whole request is committed.",
        },
      },
    )
    .post("/subscribers/invite", async ({ auth, body }) => ({ success: true, data: await invite(db, auth.waitlist!, body, config.baseUrl, dispatch) }), {
      api: subscribers,
      params: WaitlistParams,
      body: t.Union(
        [
          t.Object({ count: Int({ minimum: 1, maximum: INVITE_MAX, description: "Invite the next N waiting, by position" }) }, { additionalProperties: false }),
          t.Object({ ids: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: INVITE_MAX, description: "These subscribers, by id" }) }, { additionalProperties: false }),
          t.Object(
            { emails: t.Array(t.String({ maxLength: 254 }), { minItems: 1, maxItems: INVITE_MAX, description: "These subscribers, by email" }) },
            { additionalProperties: false },
          ),
        ],
        { description: "Exactly one of count, ids or emails", "x-one-of": true },
      ),
      response: {
        200: t.Object({
          success: t.Boolean(),
          data: t.Object({ invited: t.Array(Subscriber), skipped: t.Array(t.Object({ id: t.String(), email: t.String(), status: t.String() })) }),
        }),
        ...errorResponses(400, 401, 403, 404, 429),
      },
      detail: {
        tags: ["Subscribers"],
        summary: "Invite subscribers (extension)",
        description:
          "Moves waiting subscribers to invited in one transaction: each keeps its position as final_position, gets a single-use invite link ({BASE_URL}/i/{token}) by the invitation email, and a subscriber.invited webhook is sent. Subscribers already invited are unchanged (idempotent); pending, joined and rejected ones are skipped. The rest of the line closes up at once.",
      },
    })
    .post("/subscribers/:idOrEmail/reject", async ({ auth, params }) => ({ success: true, data: { subscriber: await reject(db, auth.waitlist!, params.idOrEmail, config.baseUrl, dispatch) } }), {
      api: subscribers,
      params: SubscriberParams,
      response: { 200: SubscriberResponse, ...errorResponses(401, 403, 404, 409, 429) },
      detail: {
        tags: ["Subscribers"],
        summary: "Reject a subscriber (extension)",
        description:
          "Takes a waiting or invited subscriber out of line for good and sends a subscriber.rejected webhook; an invited subscriber's link is withdrawn (it shows a page saying so, status 410). final_position keeps the place held. Rejecting again changes nothing.",
      },
    })
    .get(
      "/invites/:token",
      async ({ auth, params }) => {
        const row = await findByInviteToken(db, params.token);
        if (!row || row.waitlist_id !== auth.waitlist!.id) throw notFound("No such invitation in this waitlist");
        const state = inviteState(row);
        return {
          success: true,
          data: {
            invite: {
              status: state,
              valid: state === "invited" || state === "joined",
              invited_at: Number(row.invited_at),
              expires_at: Number(row.invite_expires_at),
              accepted_at: row.accepted_at === null ? null : Number(row.accepted_at),
              subscriber: { id: row.id, email: row.email, name: row.name },
            },
          },
        };
      },
      {
        api: subscribers,
        params: t.Object({ waitlistKey: t.String(), token: t.String() }),
        response: {
          200: t.Object({
            success: t.Boolean(),
            data: t.Object({
              invite: t.Object({
                status: t.Union([t.Literal("invited"), t.Literal("joined"), t.Literal("expired"), t.Literal("revoked")]),
                valid: t.Boolean(),
                invited_at: t.Number(),
                expires_at: t.Number(),
                accepted_at: t.Union([t.Number(), t.Null()]),
                subscriber: t.Object({ id: t.String(), email: t.String(), name: t.Union([t.String(), t.Null()]) }),
              }),
            }),
          }),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          tags: ["Subscribers"],
          summary: "Verify an invite token (extension)",
          description: "Whose invitation a token is and whether it is good: valid while invited and not expired, and once joined (your app receives the token after the link was used).",
        },
      },
    )
    .get(
      "/subscribers/:idOrEmail",
      async ({ auth, params }) => ({
        success: true,
        data: { subscriber: await ones.get(cachedKey(auth.waitlist!, params.idOrEmail), () => getSubscriber(db, auth.waitlist!, params.idOrEmail, config.baseUrl)) },
      }),
      {
      api: subscribers,
      params: SubscriberParams,
      response: { 200: SubscriberResponse, ...errorResponses(400, 401, 403, 404, 429) },
      detail: { tags: ["Subscribers"], summary: "Get a subscriber" },
      },
    )
    .put(
      "/subscribers/:idOrEmail",
      async ({ auth, params, body }) => ({
        success: true,
        message: "Subscriber updated",
        data: { subscriber: await updateSubscriber(db, auth.waitlist!, params.idOrEmail, body, config.baseUrl, dispatch) },
      }),
      {
        api: subscribers,
        params: SubscriberParams,
        body: UpdateBody,
        response: { 200: UpdateResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: { tags: ["Subscribers"], summary: "Update a subscriber", description: "Omitted fields are unchanged; metadata is merged (null removes a key); points re-rank at once." },
      },
    )
    .delete(
      "/subscribers/:idOrEmail",
      async ({ auth, params, query }) => deleteSubscriber(db, auth.waitlist!, params.idOrEmail, config.baseUrl, dispatch, { erase: query.erase === "true" }),
      {
        api: subscribers,
        params: SubscriberParams,
        query: t.Object(
          {
            erase: t.Optional(
              t.Union([t.Literal("true"), t.Literal("false")], {
                description:
                  "Extension (issue 47): true also removes everything that names them: the emails and webhook events about them in the outbox (sent or not) and the confirmation caps' record of their address; the subscriber.deleted webhook then carries only {subscriber: {id}, erased: true}. The server's log lines show addresses only masked.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: MessageResponse, ...errorResponses(400, 401, 403, 404, 429) },
        detail: { tags: ["Subscribers"], summary: "Delete a subscriber", description: "Permanent. Positions close up and the referrer loses this referral's credit at once." },
      },
    )
    .get(
      "/subscribers/:idOrEmail/data",
      async ({ auth, params }) => {
        const w = auth.waitlist!;
        return { success: true, data: await personalData(db, w, await findSubscriber(db, w.id, params.idOrEmail), config.baseUrl) };
      },
      {
        api: subscribers,
        params: SubscriberParams,
        response: { 200: t.Object({ success: t.Boolean(), data: PersonalData }), ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          tags: ["Subscribers"],
          summary: "Everything held about a subscriber (extension)",
          description:
            "For an access request (issue 47): the same document the subscriber downloads from their status page: the Subscriber object with fingerprint and confirmed_at, their referrals (friends' emails masked), rewards reached, every email queued or sent to them and their share clicks.",
        },
      },
    );
}
