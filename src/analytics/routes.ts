// Analytics endpoints (spec: Analytics): log-view and stats; daily stats for the dashboard (DESIGN §9).
import { Elysia, t } from "elysia";
import { publicName, topReferrers } from "../subscribers/leaderboard";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { clientIp } from "../http/client-ip";
import { errorResponses, ErrorBody, LogViewErrorBody } from "../http/error-schemas";
import { QueryInt } from "../http/schema";

/** The most entries a leaderboard answers. */
const LEADERBOARD_MAX = 100;
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
    })
    .get(
      "/leaderboard",
      async ({ auth, query }) => {
        const leaders = await topReferrers(db, auth.waitlist!.id, query.limit === undefined ? 10 : Number(query.limit));
        return { success: true, data: { leaderboard: leaders.map((l, i) => ({ rank: i + 1, name: publicName(l), referrals: Number(l.referral_count), points: Number(l.points) })) } };
      },
      {
        api: { key: "any", bucket: "analytics" },
        params: Params,
        query: t.Object({ limit: t.Optional(QueryInt({ minimum: 1, maximum: LEADERBOARD_MAX, description: "Default 10" })) }),
        response: {
          200: t.Object({
            success: t.Boolean(),
            data: t.Object({
              leaderboard: t.Array(
                t.Object({
                  rank: t.Number({ description: "1 for the top referrer; ties keep the order of confirmation" }),
                  name: t.String({ description: "The first word of the name, or the email masked (j***@example.com), as on the status page" }),
                  referrals: t.Number(),
                  points: t.Number(),
                }),
              ),
            }),
          }),
          ...errorResponses(400, 401, 403, 429),
        },
        detail: {
          tags: ["Analytics"],
          summary: "Top referrers",
          description: "Confirmed subscribers with at least one referral, most first (issue 46). Answered whatever the status page's leaderboard setting; exact after every change.",
        },
      },
    );
}
