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
import { funnel, sourceStats } from "./growth";
import { lenientOrigin, sourceOf, UTM_MAX } from "./sources";

const Days = t.Object({ days: t.Optional(QueryInt({ minimum: 1, maximum: DAILY_MAX_DAYS, description: "The last N UTC days, today included; default 30" })) });
const daysOf = (query: { days?: unknown }) => (query.days === undefined ? undefined : Number(query.days));
const nullableString = t.Union([t.String(), t.Null()]);
const FunnelNumbers = {
  views: t.Number({ description: "Counted views (a visitor's first in 24 hours)" }),
  sign_ups: t.Number({ description: "Sign-ups that joined in the period, pending ones included" }),
  confirmed: t.Number({ description: "Of those sign-ups, the ones confirmed now" }),
  shares: t.Number({ description: "Subscribers who clicked a share button on their status page" }),
  referrers: t.Number({ description: "Subscribers who referred at least one of the period's sign-ups" }),
  invitations: t.Number({ description: "Share clicks (one per subscriber, channel and day) plus counted visits through a referral link" }),
  referred_sign_ups: t.Number({ description: "Sign-ups that came through a referral link" }),
  k_factor: t.Number({ description: "invitations / sign_ups x referred_sign_ups / invitations, each factor 0 when its divisor is 0; four decimals" }),
};

const Params = t.Object({ waitlistKey: t.String() });

export function analyticsRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard> }) {
  const { db, config } = deps;
  return new Elysia({ name: "analytics/routes", prefix: "/api/v1/waitlist/:waitlistKey" })
    .use(deps.api)
    .post(
      "/log-view",
      async ({ auth, body, request, server }) => {
        const visitor = await visitorKey(db, body?.visitor_id?.trim(), clientIp(request, server, config.trustProxy), request.headers.get("user-agent") ?? "");
        const meta = body?.metadata ?? {};
        const from = { ...sourceOf(lenientOrigin((field) => meta[field])), referral: Boolean(meta.ref?.trim()) };
        const counted = await logView(db, auth.waitlist!.id, visitor, from);
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
              metadata: t.Optional(
                t.Object(
                  {
                    referring_domain: t.Optional(t.String({ maxLength: 253 })),
                    utm_source: t.Optional(t.String({ maxLength: UTM_MAX })),
                    utm_medium: t.Optional(t.String({ maxLength: UTM_MAX })),
                    utm_campaign: t.Optional(t.String({ maxLength: UTM_MAX })),
                    utm_term: t.Optional(t.String({ maxLength: UTM_MAX })),
                    utm_content: t.Optional(t.String({ maxLength: UTM_MAX })),
                    referrer_host: t.Optional(t.String({ maxLength: 253, description: "The host (or URL) of the page the visitor came from" })),
                    ref: t.Optional(t.String({ maxLength: 64, description: "The referral code the visitor's link carried: the view counts as an invitation (stats/funnel)" })),
                  },
                  { additionalProperties: false, description: "Extension (issue 46): utm_* and referrer_host count the view under its source (stats/sources)" },
                ),
              ),
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
    .get("/stats/sources", async ({ auth, query }) => ({ success: true, data: { sources: await sourceStats(db, auth.waitlist!.id, daysOf(query)) } }), {
      api: { key: "any", bucket: "analytics" },
      params: Params,
      query: Days,
      response: {
        200: t.Object({
          success: t.Boolean(),
          data: t.Object({
            sources: t.Array(
              t.Object({
                source: t.Union([t.String(), t.Null()], { description: "utm_source, else the referring host; null for visits from nowhere (typed, bookmarked)" }),
                medium: nullableString,
                campaign: nullableString,
                views: t.Number({ description: "Counted views (a visitor's first in 24 hours) that came from here" }),
                sign_ups: t.Number({ description: "Sign-ups of the period from here, pending ones included" }),
                confirmed: t.Number({ description: "Of those, the ones confirmed now" }),
              }),
            ),
          }),
        }),
        ...errorResponses(400, 401, 403, 429),
      },
      detail: {
        tags: ["Analytics"],
        summary: "Where views and sign-ups come from",
        description:
          "Extension (issue 46): the last N UTC days by source, medium and campaign, most sign-ups first. Hosted pages and the widget carry a link's utm_source, utm_medium, utm_campaign (and utm_term, utm_content) and the referring host into the sign-up; API sign-ups give them in metadata.",
      },
    })
    .get("/stats/funnel", async ({ auth, query }) => ({ success: true, data: await funnel(db, auth.waitlist!.id, daysOf(query)) }), {
      api: { key: "any", bucket: "analytics" },
      params: Params,
      query: Days,
      response: {
        200: t.Object({
          success: t.Boolean(),
          data: t.Object({ ...FunnelNumbers, days: t.Array(t.Object({ date: t.String({ description: "UTC date, YYYY-MM-DD" }), ...FunnelNumbers })) }),
        }),
        ...errorResponses(400, 401, 403, 429),
      },
      detail: {
        tags: ["Analytics"],
        summary: "The referral loop in numbers",
        description:
          "Extension (issue 46): views, sign-ups, confirmed, subscribers who shared and who referred, and the viral coefficient K (invitations per sign-up x conversion of invitations into referred sign-ups; an invitation is a share-button click on a status page or a visit through a referral link) over the last N UTC days and per day, oldest first, zero-filled.",
      },
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
