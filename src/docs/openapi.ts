// OpenAPI 3.1 document at /swagger/json (docs/document.ts) and Swagger UI at /swagger, its assets served from the binary (no CDN).
import { Elysia } from "elysia";
import { buildDocument } from "./document";
// files, not text: served from the binary's embedded copy as asked for, not held in the heap (1.9 MB of strings there,
// which the heap's growth policy multiplies under load; issue 19)
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

const START = `window.ui = SwaggerUIBundle({ dom_id: "#swagger-ui", url: "/swagger/json", persistAuthorization: true });\n`;

// a Bun.file reads nothing until a response sends it
const ASSETS: Record<string, { body: string | Blob; type: string }> = {
  "start.js": { body: START, type: "text/javascript; charset=utf-8" },
  "swagger-ui-bundle.js": { body: Bun.file(bundlePath), type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { body: Bun.file(cssPath), type: "text/css; charset=utf-8" },
};

/** Swagger UI's page: its bundle and a start-up script, all from this server, under a CSP (no inline script). */
const UI_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waitlist API</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/swagger/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger/assets/swagger-ui-bundle.js"></script>
<script src="/swagger/assets/start.js"></script>
</body>
</html>`;
// Swagger UI sets some styles inline as it renders
const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const INFO = {
  title: "Waitlist API",
  version: "1.0.0",
  description:
    "Waitlists, subscribers, referrals, landing pages and analytics. Authenticate with an X-Api-Key header: an account key (wl_acct_...) or a per-waitlist key (wl_...). Pages, links and the public form action need no key.",
};

/** `config` is read when the document is first asked for: the server's BASE_URL is final by then (PORT=0). */
export function apiDocs(config: { baseUrl: string }) {
  let cached: { routes: number; doc: unknown } | null = null;
  const docs: Elysia = new Elysia({ name: "docs/openapi" })
    .get("/swagger", () => new Response(UI_PAGE, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": UI_CSP } }), { detail: { hide: true } })
    .get(
      "/swagger/assets/:file",
      ({ params, set }) => {
        const asset = ASSETS[params.file];
        if (!asset) {
          set.status = 404;
          return { statusCode: 404, error: "Not Found", message: `No asset ${params.file}` };
        }
        return new Response(asset.body, { headers: { "content-type": asset.type, "cache-control": "public, max-age=86400" } });
      },
      { detail: { hide: true } },
    )
    // documented by docs/public-routes.ts, like every page
    .get(
      "/swagger/json",
      () => {
        // every route of the app, as @elysiajs/openapi reads them (a protected method)
        const app = docs as unknown as { getGlobalRoutes(): { method: string; path: string }[] };
        const routes = app.getGlobalRoutes().length;
        if (cached?.routes !== routes) cached = { routes, doc: buildDocument(app, { ...INFO, baseUrl: config.baseUrl }) };
        return cached.doc;
      },
      { detail: { hide: true } },
    ) as unknown as Elysia;
  return docs;
}
