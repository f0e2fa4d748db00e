// Analytics endpoints (spec: Analytics): log-view and stats; daily stats for the dashboard (DESIGN §9).
import { Elysia, t } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { clientIp } from "../http/client-ip";
import { errorResponses, ErrorBody, LogViewErrorBody } from "../http/error-schemas";
import { QueryInt } from "../http/schema";
import { DAILY_MAX_DAYS, dailyStats, logView, stats, visitorKey } from "./service";

const Params = t.Object({ waitlistKey: t.String() });

export function analyticsRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard> }) {
  const { db, config } = deps;
  return new Elysia({ name: "analytics/routes", prefix: "/api/v1/waitlist/:waitlistKey" })
    .use(deps.api)
    .post(
      "/log-view",
      async ({ auth, body, request, server }) => {
        const visitor = await visitorKey(db, body?.visitor_id?.trim(), clientIp(request, server, config.trustProxy), request.headers.get("user-agent") ?? "");
        const counted = await logView(db, auth.waitlist!.id, visitor);
        // spec: a repeat view within 24 hours is 200 with success false
        return counted ? { success: true, message: "View logged" } : { success: false, message: "View already counted for this visitor in the last 24 hours" };
      },
      {
        api: { key: "any", bucket: "analytics", minPlan: "growth", errors: "logview" },
        params: Params,
        body: t.Optional(
          t.Object(
            {
              visitor_id: t.Optional(t.String({ maxLength: 200, description: "Dedupe key; without it the visitor is a salted daily hash of IP and User-Agent" })),
              metadata: t.Optional(t.Object({ referring_domain: t.Optional(t.String({ maxLength: 253 })) }, { additionalProperties: false })),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), 400: LogViewErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody },
        detail: { tags: ["Analytics"], summary: "Log a landing-page view", description: "Counted once per visitor per 24 hours." },
      },
    )
    .get("/stats", async ({ auth }) => ({ success: true, data: await stats(db, auth.waitlist!) }), {
      api: { key: "any", bucket: "analytics" },
      params: Params,
      response: {
        200: t.Object({ success: t.Boolean(), data: t.Object({ subscribers_total: t.Number(), views_total: t.Number(), referral_program_enabled: t.Boolean() }) }),
        ...errorResponses(401, 403, 429),
      },
      detail: { tags: ["Analytics"], summary: "Headline counters", description: "subscribers_total counts confirmed subscribers." },
    })
    .get("/stats/daily", async ({ auth, query }) => ({ success: true, data: { days: await dailyStats(db, auth.waitlist!.id, query.days === undefined ? undefined : Number(query.days)) } }), {
      api: { key: "any", bucket: "analytics" },
      params: Params,
      query: t.Object({ days: t.Optional(QueryInt({ minimum: 1, maximum: DAILY_MAX_DAYS, description: "Default 30" })) }),
      response: {
        200: t.Object({ success: t.Boolean(), data: t.Object({ days: t.Array(t.Object({ date: t.String(), sign_ups: t.Number(), views: t.Number() })) }) }),
        ...errorResponses(400, 401, 403, 429),
      },
      detail: { tags: ["Analytics"], summary: "Daily sign-ups and views", description: "UTC dates, oldest first, zero-filled (dashboard extension)." },
    });
}
