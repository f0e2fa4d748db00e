// Issue 46 item 4: a sign-up form for any site. `<script src="{BASE_URL}/embed.js" data-waitlist="KEY" async>` renders
// it in a shadow root (public/embed.js), configured by GET /s/{key}/widget and counting its views by POST
// /s/{key}/view; GET /embed/{key} is the same widget in a page of ours, for an <iframe> on a site that forbids scripts.
// Every one of them answers a site only if the waitlist's allow-list lets it post the form (DESIGN §4).
import { Elysia, t } from "elysia";
import { and, eq } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { ErrorBody } from "../http/error-schemas";
import { clientIp } from "../http/client-ip";
import { AppError } from "../http/errors";
import { livePage } from "../landing/service";
import { formFieldsOf } from "../waitlists/form-fields";
import { referralLink } from "../waitlists/links";
import { logView, visitorKey } from "../analytics/service";
import { lenientOrigin, sourceOf } from "../analytics/sources";
import { escapeHtml } from "../pages/html";
import { isAllowedHost, submittingHost } from "./service";
import embedJs from "../../public/embed.js" with { type: "text" };

/** The placeholder of the referral link's code in the widget's configuration. */
const CODE = "REFERRALCODE";

const WidgetConfig = t.Object({
  key: t.String(),
  name: t.String(),
  allowed: t.Boolean({ description: "Whether the asking site (its Origin) may post the form: its domain is the service's, the custom domain or in allowed_domains" }),
  theme: t.Union([t.Literal("light"), t.Literal("dark")], { description: "The published page's theme (light without one); the script tag's data-theme overrides it" }),
  color: t.String({ description: "The waitlist's colour (settings email_template.color), #rrggbb" }),
  headline: t.String(),
  button_text: t.String(),
  collect_name: t.Boolean(),
  collect_phone: t.Boolean(),
  questions: t.Array(
    t.Object({
      key: t.String(),
      label: t.String(),
      type: t.String(),
      required: t.Boolean(),
      options: t.Array(t.String()),
      max_length: t.Union([t.Number(), t.Null()]),
    }),
    { description: "The waitlist's questions (settings form_fields)" },
  ),
  captcha: t.Union([t.Literal("off"), t.Literal("altcha")], { description: "As the settings' captcha: with altcha the post needs a solved challenge from GET /s/{waitlistKey}/challenge" }),
  referral_link: t.String({ description: `A subscriber's referral link with ${CODE} in place of their referral code` }),
});

const JS_HEADERS = { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=300", "access-control-allow-origin": "*", "x-content-type-options": "nosniff" };

/** The CSP `frame-ancestors` sources of the iframe embed: this service, the custom domain, the allowed domains. */
export function frameAncestors(w: Pick<Waitlist, "customDomain" | "allowedDomains">): string {
  const hosts = [...(w.customDomain ? [w.customDomain] : []), ...(JSON.parse(w.allowedDomains) as string[])];
  // as allowed_domains does: either scheme, any port (`:*`: a source without one matches the default port only), and
  // a `*.x` source matches subdomains
  return ["'self'", ...hosts.filter((h) => /^(\*\.)?[a-z0-9.-]+$/i.test(h)).map((h) => `${h}:*`)].join(" ");
}

export function embedRoutes(deps: { db: Db; config: Config }) {
  const { db, config } = deps;
  const ownHost = new URL(config.baseUrl).hostname.toLowerCase();

  async function findWaitlist(key: string) {
    const [w] = await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.key, key));
    return w;
  }

  async function configOf(w: Waitlist, allowed: boolean): Promise<typeof WidgetConfig.static> {
    const { landingPages } = db.t;
    const [row] = await db.select().from(landingPages).where(and(eq(landingPages.waitlistId, w.id), eq(landingPages.status, "published")));
    const page = row ? livePage(row) : null;
    const standard = page?.pageType === "standard" ? page : null;
    return {
      key: w.key,
      name: w.name,
      allowed,
      theme: page?.theme === "dark" ? "dark" : "light",
      color: w.emailColor,
      headline: standard?.headline || `Join the ${w.name} waitlist`,
      button_text: standard?.buttonText || "Join the waitlist",
      collect_name: standard?.collectName ?? false,
      collect_phone: standard?.collectPhone ?? false,
      questions: formFieldsOf(w),
      captcha: w.captcha === "altcha" ? "altcha" : "off",
      referral_link: referralLink(w, CODE, config.baseUrl),
    };
  }

  /** CORS for a site the allow-list lets post; nothing for any other (its browser then reads no answer). */
  const corsFor = (request: Request, w: Waitlist): Record<string, string> => {
    const origin = request.headers.get("origin");
    return origin && origin !== "null" && isAllowedHost(submittingHost(request), w, ownHost) ? { "access-control-allow-origin": origin, vary: "Origin" } : { vary: "Origin" };
  };

  return new Elysia({ name: "forms/embed" })
    .get("/embed.js", () => new Response(embedJs as unknown as string, { headers: JS_HEADERS }), { detail: { hide: true } })
    .get(
      "/s/:waitlistKey/widget",
      async ({ params, request, set }) => {
        const w = await findWaitlist(params.waitlistKey);
        if (!w) throw new AppError("not_found", "This waitlist does not exist");
        const origin = request.headers.get("origin");
        // its questions and look are public (the hosted page shows them); whether the site may post is the answer's `allowed`
        Object.assign(set.headers, { "cache-control": "no-store", vary: "Origin", ...(origin && origin !== "null" ? { "access-control-allow-origin": origin } : {}) });
        return configOf(w, isAllowedHost(submittingHost(request), w, ownHost));
      },
      {
        params: t.Object({ waitlistKey: t.String() }),
        response: { 200: WidgetConfig, 404: ErrorBody },
        detail: {
          tags: ["Public form"],
          summary: "The embeddable widget's configuration",
          description:
            "No API key. What {BASE_URL}/embed.js renders: the waitlist's name, look, questions, captcha and referral link pattern, and whether the asking site may post the form (allowed_domains). Readable from any origin.",
          security: [],
        },
      },
    )
    .post(
      "/s/:waitlistKey/view",
      async ({ params, request, body, server, set }) => {
        const w = await findWaitlist(params.waitlistKey);
        if (!w) throw new AppError("not_found", "This waitlist does not exist");
        if (!isAllowedHost(submittingHost(request), w, ownHost)) throw new AppError("forbidden", "This site may not show this waitlist's form: add its domain to the waitlist's allowed_domains");
        Object.assign(set.headers, corsFor(request, w));
        const fields = (body ?? {}) as Record<string, string | undefined>;
        const from = { ...sourceOf(lenientOrigin((f) => fields[f])), referral: Boolean(fields.ref?.trim()) };
        const visitor = await visitorKey(db, null, clientIp(request, server, config.trustProxy), request.headers.get("user-agent") ?? "");
        return { success: true, counted: await logView(db, w.id, visitor, from) };
      },
      {
        params: t.Object({ waitlistKey: t.String() }),
        body: t.Optional(
          t.Object(
            {
              ref: t.Optional(t.String({ maxLength: 64 })),
              utm_source: t.Optional(t.String({ maxLength: 200 })),
              utm_medium: t.Optional(t.String({ maxLength: 200 })),
              utm_campaign: t.Optional(t.String({ maxLength: 200 })),
              utm_term: t.Optional(t.String({ maxLength: 200 })),
              utm_content: t.Optional(t.String({ maxLength: 200 })),
              referrer_host: t.Optional(t.String({ maxLength: 2000 })),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: t.Object({ success: t.Boolean(), counted: t.Boolean({ description: "false for a visitor counted in the last 24 hours" }) }), 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: {
          tags: ["Public form"],
          summary: "Count a view of the embedded widget",
          description:
            "No API key. The widget posts it once shown (urlencoded or JSON): the host page's ref, utm_* parameters and referring host. Counted like a hosted page's view (a visitor's first in 24 hours), under its source. The Origin or Referer must be allowed to post the form (403 otherwise).",
          security: [],
        },
      },
    )
    .get(
      "/embed/:waitlistKey",
      async ({ params }) => {
        const w = await findWaitlist(params.waitlistKey);
        if (!w) return new Response("This waitlist does not exist", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
        const key = escapeHtml(w.key);
        // the widget itself, from this origin; without scripts, a plain form whose answer opens in the whole window
        const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(`Join the ${w.name} waitlist`)}</title>
</head>
<body>
<script src="/embed.js" data-waitlist="${key}" data-frame="true" async></script>
<noscript><form method="post" action="/s/${key}" target="_top"><label>Email <input name="email" type="email" required></label> <button type="submit">Join the waitlist</button></form></noscript>
</body>
</html>`;
        return new Response(html, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "referrer-policy": "strict-origin-when-cross-origin",
            "content-security-policy": `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors ${frameAncestors(w)}`,
          },
        });
      },
      { detail: { hide: true }, params: t.Object({ waitlistKey: t.String() }) },
    );
}
