// Hosted pages (DESIGN §4): thank-you /t/{token}, confirm-pending /pending/{waitlistKey}; the links that act are in ./links.
import { Elysia, t } from "elysia";
import { eq, sql } from "drizzle-orm";
import { topReferrers } from "../subscribers/leaderboard";
import css from "../../public/pages.css" with { type: "text" };
import favicon from "../../public/favicon.svg" with { type: "text" };
import js from "../../public/pages.js" with { type: "text" };
import hostedCss from "../../public/hosted.css" with { type: "text" };
import type { Logger } from "../log";
import { clientIp } from "../http/client-ip";
import { mayAskInternal } from "../http/internal";
import { createPageServer } from "./landing";
import { page } from "./layout";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { Dispatch } from "../outbox/events";
import { selectSubscribers, statusOf } from "../subscribers/view";
import { htmlResponse, notFoundPage, PAGE_HEADERS } from "./layout";
import { renderHostedPage, withInputs } from "./hosted";
import { hostName, lenientOrigin, noOrigin, type OriginField } from "../analytics/sources";
import { findPreview } from "../landing/preview";
import { linkRoutes } from "./links";
import { readCache } from "../db/read-cache";
import { waitlistRows } from "../waitlists/rows";
import { recordShare, SHARE_CHANNELS, type ShareChannel } from "../analytics/growth";
import { ErrorBody } from "../http/error-schemas";
import { isAllowedHost, submittingHost } from "../forms/service";
import { AppError } from "../http/errors";
import { awaitingConfirmationPage, outOfLinePage, pendingPage, thankYouPage } from "./thank-you";

const ASSETS: Record<string, { body: string; type: string }> = {
  "pages.css": { body: css as unknown as string, type: "text/css; charset=utf-8" },
  "pages.js": { body: js as unknown as string, type: "text/javascript; charset=utf-8" },
  "hosted.css": { body: hostedCss as unknown as string, type: "text/css; charset=utf-8" },
  "favicon.svg": { body: favicon as unknown as string, type: "image/svg+xml" },
};

const LIVE_HEADERS = { "content-type": "application/json;charset=utf-8", "cache-control": "no-store" };

const hostOf = (request: Request) => (request.headers.get("host") ?? "").toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");

/**
 * What a page's address and arrival say of its visitor (issue 46): the first `ref` and UTM parameters of the query
 * string (parsed only when there is one: most page views have none), and the host of the page before ours (the
 * Referer, unless it is this service or this very host).
 */
function arrival(request: Request, ownHost: string) {
  const at = request.url.indexOf("?");
  const query = at < 0 ? null : new URLSearchParams(request.url.slice(at + 1));
  const referer = request.headers.get("referer");
  const from = referer ? hostName(referer) : null;
  const host = from && from !== ownHost && from !== hostOf(request) ? from : null;
  if (!query && !host) return { ref: null, origin: noOrigin() };
  const origin = lenientOrigin((field: OriginField) => (field === "referrer_host" ? host : query?.get(field)));
  return { ref: query?.get("ref") ?? null, origin };
}

export function pageRoutes(deps: { db: Db; config: Config; dispatch: Dispatch; log: Logger }) {
  const { db, config } = deps;
  const { waitlists } = db.t;
  const hidden = { detail: { hide: true } };
  const landing = createPageServer(deps);
  const rows = waitlistRows(db);
  const ownHost = new URL(config.baseUrl).hostname;
  // a page's query string is the visitor's: `ref` and `utm_*` (the first of each, if repeated) are read and any other
  // parameter (fbclid, gclid...) is left alone, never a 400: every ad and newsletter link carries some (issues 44, 46)
  const visitor = (request: Request, server: any) => ({
    ip: clientIp(request, server, config.trustProxy),
    userAgent: request.headers.get("user-agent") ?? "",
    ...arrival(request, ownHost),
  });
  /** The subscriber a status link names, with its waitlist (null for an unknown link). */
  async function bySignUpToken(signUpToken: string) {
    const [sub] = await selectSubscribers(db, sql`s.sign_up_token = ${signUpToken}`);
    if (!sub) return null;
    const w = await rows.byId(sub.waitlist_id);
    return w ? { sub, w } : null;
  }
  /** The status page's HTML and status; null for an unknown link. */
  async function statusPage(signUpToken: string): Promise<{ html: string; status: number } | null> {
    const found = await bySignUpToken(signUpToken);
    if (!found) return null;
    const { sub, w } = found;
    if (sub.status !== "confirmed") return { html: awaitingConfirmationPage(w), status: 200 };
    if (sub.access !== "waiting") return { html: outOfLinePage(sub, w), status: 200 };
    const [reached, leaders] = await Promise.all([
      db.rows<{ referrals: number; reward: string }>(sql`SELECT referrals, reward FROM milestone_rewards WHERE subscriber_id = ${sub.id} ORDER BY referrals`),
      w.leaderboard ? topReferrers(db, w.id, 10) : [],
    ]);
    return { html: thankYouPage(sub, w, config.baseUrl, { reached, leaders }), status: 200 };
  }
  /** The live numbers' JSON text; null for an unknown link. */
  async function live(signUpToken: string): Promise<string | null> {
    const found = await bySignUpToken(signUpToken);
    if (!found) return null;
    const { sub, w } = found;
    const position = sub.position === null ? null : Number(sub.position);
    return JSON.stringify({
      status: statusOf(sub),
      position,
      inflated_position: position === null ? null : position + w.positionOffset,
      referral_count: Number(sub.referral_count),
      points: Number(sub.points),
    });
  }
  // issue 19: both are read again only once something was committed (anywhere); unknown links are not kept
  const statusPages = readCache<string, { html: string; status: number } | null>(db, { max: 10_000, keep: (v) => v !== null });
  const liveNumbers = readCache<string, string | null>(db, { max: 10_000, keep: (v) => v !== null });
  return new Elysia({ name: "pages/routes" })
    .use(linkRoutes(deps))
    .get(
      "/",
      ({ request, server, set }) => {
        const host = hostOf(request);
        // DESIGN §4: on a waitlist's custom domain, / is its published page
        if (host && host !== ownHost && host !== "localhost" && host !== "127.0.0.1") return landing.byDomain(host, visitor(request, server), request, set);
        return htmlResponse(page("Waitlist", `<h1>Waitlist is running</h1><p>The API is documented at <a href="/swagger">/swagger</a>.</p>`));
      },
      hidden,
    )
    .get(
      "/internal/custom-domain",
      async ({ query, request, server }) => {
        // Caddy's on-demand TLS asks before issuing a certificate (deploy/Caddyfile): with INTERNAL_TOKEN, or from this machine without a proxy
        if (!mayAskInternal(request, server, query.token, config)) return new Response("forbidden", { status: 403 });
        const domain = (query.domain ?? "").toLowerCase().replace(/\.$/, "");
        const [w] = domain && !domain.includes("\0") ? await db.select({ id: waitlists.id }).from(waitlists).where(eq(waitlists.customDomain, domain)) : [];
        return new Response(w ? "ok" : "unknown domain", { status: w ? 200 : 404 });
      },
      { ...hidden, query: t.Object({ domain: t.Optional(t.String()), token: t.Optional(t.String()) }) },
    )
    .get("/p/:slug", ({ params, request, server, set }) => landing.bySlug(params.slug, visitor(request, server), request, set), {
      ...hidden,
      params: t.Object({ slug: t.String() }),
    })
    .get(
      "/preview/:token",
      async ({ params }) => {
        // DESIGN §9: the dashboard's live preview; framed by the dashboard only, its form never submits
        const found = await findPreview(db, params.token);
        if (!found) return notFoundPage("Preview expired", "This preview is no longer available. Change a field in the dashboard to make a new one.");
        const pageUrl = `${config.baseUrl}/preview/${params.token}`;
        const { html, csp } = renderHostedPage(found.page, found.waitlist, { baseUrl: config.baseUrl, pageUrl }, true);
        return new Response(withInputs(html, ""), { headers: { ...PAGE_HEADERS, "content-security-policy": csp, "x-robots-tag": "noindex" } });
      },
      { ...hidden, params: t.Object({ token: t.String() }) },
    )
    // every page, Swagger UI and the dashboard name /assets/favicon.svg; a browser that asks for /favicon.ico anyway
    // (a bookmark, a JSON answer opened in a tab) gets the same icon rather than a logged 404
    .get("/favicon.ico", () => new Response(ASSETS["favicon.svg"].body, { headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" } }), hidden)
    .get(
      "/assets/:file",
      ({ params }) => {
        const asset = ASSETS[params.file];
        if (!asset) return notFoundPage("Not found", "There is nothing here.");
        return new Response(asset.body, { headers: { "content-type": asset.type, "cache-control": "public, max-age=3600" } });
      },
      hidden,
    )
    .get(
      "/t/:token",
      async ({ params, set }) => {
        const shown = await statusPages.get(params.token, () => statusPage(params.token));
        if (!shown) return notFoundPage("Link not found", "This waitlist link is not valid. Check that you copied the whole address.");
        Object.assign(set.headers, PAGE_HEADERS);
        set.status = shown.status;
        return shown.html;
      },
      { ...hidden, params: t.Object({ token: t.String() }) },
    )
    .get(
      "/t/:token/live",
      async ({ params, set }) => {
        // issue 11: the status page keeps its numbers current (public/pages.js asks every 30 s and on return to the tab)
        const body = await liveNumbers.get(params.token, () => live(params.token));
        if (!body) return Response.json({ statusCode: 404, error: "Not Found", message: "Unknown status link" }, { status: 404 });
        Object.assign(set.headers, LIVE_HEADERS);
        return body;
      },
      { ...hidden, params: t.Object({ token: t.String() }) },
    )
    .post(
      "/t/:token/share",
      async ({ params, body, request }) => {
        // a browser's post from another site is refused (the status page is ours, or the waitlist's custom domain)
        const origin = request.headers.get("origin");
        if (origin && origin !== "null") {
          const found = await bySignUpToken(params.token);
          if (found && !isAllowedHost(submittingHost(request), { customDomain: found.w.customDomain, allowedDomains: "[]" }, ownHost)) {
            throw new AppError("forbidden", "Share clicks are counted from the status page only");
          }
        }
        await recordShare(db, params.token, body.channel as ShareChannel);
        return { success: true };
      },
      {
        params: t.Object({ token: t.String() }),
        body: t.Object(
          { channel: t.Union(SHARE_CHANNELS.map((c) => t.Literal(c)), { description: "The share button clicked" }) },
          { additionalProperties: false },
        ),
        response: { 200: t.Object({ success: t.Boolean() }), 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: {
          tags: ["Pages"],
          summary: "Count a share-button click",
          description:
            "No API key. The status page posts it when its subscriber clicks a share button (x, facebook, linkedin, whatsapp, telegram, reddit, email, sms, copy, native); nothing is sent to the network itself. Counted once per subscriber, channel and UTC day as an invitation in GET .../stats/funnel. 404 for an unknown link, 409 while the subscriber has not confirmed (there is no referral link yet).",
          security: [],
        },
      },
    )
    .get(
      "/pending/:waitlistKey",
      async ({ params }) => {
        const [w] = await db.select().from(waitlists).where(eq(waitlists.key, params.waitlistKey));
        if (!w) return notFoundPage("Waitlist not found", "This waitlist does not exist.");
        return htmlResponse(pendingPage(w));
      },
      { ...hidden, params: t.Object({ waitlistKey: t.String() }) },
    );
}
