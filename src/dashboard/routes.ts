// The dashboard (DESIGN §9): a static shell and its own browser modules, embedded in the binary and
// served under a strict CSP. It talks to the public API only; nothing here reads the database.
import { Elysia, t } from "elysia";
import app from "../../public/dashboard/app.js" with { type: "text" };
import account from "../../public/dashboard/account.js" with { type: "text" };
import api from "../../public/dashboard/api.js" with { type: "text" };
import dom from "../../public/dashboard/dom.js" with { type: "text" };
import chart from "../../public/dashboard/chart.js" with { type: "text" };
import growth from "../../public/dashboard/growth.js" with { type: "text" };
import nav from "../../public/dashboard/nav.js" with { type: "text" };
import subscribersTable from "../../public/dashboard/subscribers-table.js" with { type: "text" };
import viewWaitlists from "../../public/dashboard/view-waitlists.js" with { type: "text" };
import viewOverview from "../../public/dashboard/view-overview.js" with { type: "text" };
import viewSettings from "../../public/dashboard/view-settings.js" with { type: "text" };
import viewPage from "../../public/dashboard/view-page.js" with { type: "text" };
import viewBroadcasts from "../../public/dashboard/view-broadcasts.js" with { type: "text" };
import emailFrame from "../../public/dashboard/email-frame.js" with { type: "text" };
import viewKeys from "../../public/dashboard/view-keys.js" with { type: "text" };
import viewWebhooks from "../../public/dashboard/view-webhooks.js" with { type: "text" };
import viewAudit from "../../public/dashboard/view-audit.js" with { type: "text" };
import viewTeam from "../../public/dashboard/view-team.js" with { type: "text" };
import css from "../../public/dashboard/dashboard.css" with { type: "text" };

const JS = "text/javascript; charset=utf-8";
const ASSETS: Record<string, { body: string; type: string }> = {
  "app.js": { body: app, type: JS },
  "account.js": { body: account, type: JS },
  "api.js": { body: api, type: JS },
  "dom.js": { body: dom, type: JS },
  "chart.js": { body: chart, type: JS },
  "growth.js": { body: growth, type: JS },
  "nav.js": { body: nav, type: JS },
  "subscribers-table.js": { body: subscribersTable, type: JS },
  "view-waitlists.js": { body: viewWaitlists, type: JS },
  "view-overview.js": { body: viewOverview, type: JS },
  "view-settings.js": { body: viewSettings, type: JS },
  "view-page.js": { body: viewPage, type: JS },
  "view-broadcasts.js": { body: viewBroadcasts, type: JS },
  "email-frame.js": { body: emailFrame, type: JS },
  "view-keys.js": { body: viewKeys, type: JS },
  "view-webhooks.js": { body: viewWebhooks, type: JS },
  "view-audit.js": { body: viewAudit, type: JS },
  "view-team.js": { body: viewTeam, type: JS },
  "dashboard.css": { body: css, type: "text/css; charset=utf-8" },
};

/** Own scripts and styles only; the preview frame is our own /preview page; API calls to this origin. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

// nosniff and no-referrer come with every response (http/security-headers.ts); the dashboard's CSP is its own
const SECURITY = { "content-security-policy": CSP };

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Waitlist dashboard</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<a class="skip" href="#app">Skip to content</a>
<header class="top"><a class="brand" href="#/">Waitlist</a><div id="account"></div></header>
<div id="status" aria-live="polite"></div>
<main id="app" tabindex="-1"><noscript><p>The dashboard needs JavaScript. The API works without it: see <a href="/swagger">/swagger</a>.</p></noscript></main>
</body>
</html>`;

/**
 * The frame an email preview is shown in (view-broadcasts.js): a document of its own whose CSP lets the email's inline
 * styles and its logo (any https image) apply, and runs no script but its own, which takes the HTML from its parent.
 */
const EMAIL_FRAME = `<!doctype html><html><head><meta charset="utf-8"><script src="/dashboard/assets/email-frame.js" defer></script></head><body></body></html>`;
const EMAIL_FRAME_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

export function dashboardRoutes() {
  const hidden = { detail: { hide: true } };
  const shell = () => new Response(SHELL, { headers: { ...SECURITY, "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } });
  return new Elysia({ name: "dashboard/routes" })
    .get("/dashboard", shell, hidden)
    .get("/dashboard/", shell, hidden)
    .get(
      "/dashboard/email-frame",
      () => new Response(EMAIL_FRAME, { headers: { "content-security-policy": EMAIL_FRAME_CSP, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } }),
      hidden,
    )
    .get(
      "/dashboard/assets/:file",
      ({ params }) => {
        const asset = ASSETS[params.file];
        if (!asset) return new Response("Not found", { status: 404, headers: { ...SECURITY, "content-type": "text/plain; charset=utf-8" } });
        // revalidated on every load, so an upgraded binary's dashboard is picked up at once
        return new Response(asset.body, { headers: { ...SECURITY, "content-type": asset.type, "cache-control": "no-cache" } });
      },
      { ...hidden, params: t.Object({ file: t.String() }) },
    );
}
