// Broadcast endpoints (issue 45): drafts, preview, test copy, send or schedule, cancel.
import { Elysia, t } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import type { Dispatch } from "../outbox/events";
import { MessageResponse } from "../subscribers/model";
import { BroadcastListResponse, BroadcastResponse, CreateBody, PreviewResponse, SendBody, TestBody, UpdateBody } from "./model";
import { cancelBroadcast, createBroadcast, deleteBroadcast, getBroadcast, listBroadcasts, previewBroadcast, sendBroadcast, testBroadcast, updateBroadcast } from "./service";

const Params = t.Object({ waitlistKey: t.String() });
const OneParams = t.Object({ waitlistKey: t.String(), id: t.String({ description: "Broadcast id (bc_...)" }) });
const tags = ["Broadcasts"];

export function broadcastRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatch: Dispatch }) {
  const { db, config, dispatch } = deps;
  const api = { key: "any", bucket: "settings", minPlan: "growth" } as const;
  const one = { api, params: OneParams };
  return new Elysia({ name: "broadcasts/routes", prefix: "/api/v1/waitlist/:waitlistKey/broadcasts" })
    .use(deps.api)
    .get("", async ({ auth }) => ({ success: true, data: { broadcasts: await listBroadcasts(db, auth.waitlist!) } }), {
      api,
      params: Params,
      response: { 200: BroadcastListResponse, ...errorResponses(401, 403, 429) },
      detail: { tags, summary: "List broadcasts", description: "The newest 100, newest first, with their counts." },
    })
    .post(
      "",
      async ({ auth, body, set }) => {
        const broadcast = await createBroadcast(db, auth.waitlist!, body);
        set.status = 201;
        return { success: true, data: { broadcast } };
      },
      {
        api,
        params: Params,
        body: CreateBody,
        response: { 201: BroadcastResponse, ...errorResponses(400, 401, 403, 429) },
        detail: { tags, summary: "Create a draft broadcast", description: "A draft to a segment of the list; nothing is sent until POST .../send. An unknown merge tag or tag name is a 400." },
      },
    )
    .get("/:id", async ({ auth, params }) => ({ success: true, data: { broadcast: await getBroadcast(db, auth.waitlist!, params.id) } }), {
      ...one,
      response: { 200: BroadcastResponse, ...errorResponses(401, 403, 404, 429) },
      detail: { tags, summary: "Get a broadcast", description: "Its status and counts: watch a sending broadcast's progress here." },
    })
    .patch("/:id", async ({ auth, params, body }) => ({ success: true, data: { broadcast: await updateBroadcast(db, auth.waitlist!, params.id, body) } }), {
      ...one,
      body: UpdateBody,
      response: { 200: BroadcastResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      detail: { tags, summary: "Change a draft", description: "Only a draft (409 otherwise)." },
    })
    .delete("/:id", async ({ auth, params }) => deleteBroadcast(db, auth.waitlist!, params.id), {
      ...one,
      response: { 200: MessageResponse, ...errorResponses(401, 403, 404, 409, 429) },
      detail: { tags, summary: "Delete a broadcast", description: "A draft, sent or cancelled one; a scheduled or sending one is a 409 (cancel it first)." },
    })
    .get("/:id/preview", async ({ auth, params }) => ({ success: true, data: await previewBroadcast(db, auth.waitlist!, params.id, config.baseUrl) }), {
      ...one,
      response: { 200: PreviewResponse, ...errorResponses(401, 403, 404, 429) },
      detail: { tags, summary: "Preview a broadcast", description: "How many would receive it now, and the email the first of them would get." },
    })
    .post("/:id/test", async ({ auth, params, body }) => testBroadcast(db, auth.waitlist!, params.id, body.email, config.baseUrl, dispatch), {
      ...one,
      body: TestBody,
      response: { 200: MessageResponse, ...errorResponses(400, 401, 403, 404, 429) },
      detail: {
        tags,
        summary: "Send a test copy",
        description: "To any address, subject prefixed [Test], merge tags filled with example values (never a real subscriber's links). Any status.",
      },
    })
    .post("/:id/send", async ({ auth, params, body }) => ({ success: true, data: { broadcast: await sendBroadcast(db, auth.waitlist!, params.id, body?.send_at) } }), {
      ...one,
      body: t.Optional(SendBody),
      response: { 200: BroadcastResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      detail: {
        tags,
        summary: "Send or schedule a broadcast",
        description:
          "A draft or scheduled broadcast: sending starts within 5 seconds (or at send_at) and goes at MAIL_RATE_PER_MINUTE. The segment is read as the emails are queued; each subscriber receives it once at most, across restarts and instances.",
      },
    })
    .post("/:id/cancel", async ({ auth, params }) => ({ success: true, data: { broadcast: await cancelBroadcast(db, auth.waitlist!, params.id) } }), {
      ...one,
      response: { 200: BroadcastResponse, ...errorResponses(401, 403, 404, 409, 429) },
      detail: { tags, summary: "Cancel a broadcast", description: "Stops what has not left; emails already sent stay sent. A sent or cancelled broadcast is a 409." },
    });
}
